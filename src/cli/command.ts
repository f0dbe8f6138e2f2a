import type { Command } from 'commander';
import type { Config } from '../config.js';
import type { Output } from './output.js';
import type { CliServices } from './services.js';

// What the program (program.ts) gives its commands (commands/): a file of its own, so that a command needs
// nothing of the program that lists it.

/** What a command's action is given besides its arguments. */
export interface CommandContext {
  out: Output;
  /** the configuration, read from the environment as the server reads it */
  config: Config;
  /** the database and the services, opened (and migrated) on first use and closed when the command ends */
  services(): Promise<CliServices>;
  /** where passwords are read from when it is not a terminal */
  stdin: NodeJS.ReadableStream & { isTTY?: boolean; setRawMode?: (raw: boolean) => unknown };
  /** calls `listener` at the operator's next interrupt (Ctrl-C); the function returned stops listening */
  onInterrupt(listener: () => void): () => void;
}

/** Turns a command's function into a commander action: context, exit status, resources closed. */
export interface Cli {
  action<A extends unknown[]>(run: (ctx: CommandContext, ...args: A) => Promise<void>): (...args: A) => Promise<void>;
}

/**
 * A command module: adds its command (with its subcommands, options and help) to the program. The list of
 * modules is commands/index.ts; a new command is a file there and one line in that list.
 */
export type CommandModule = (program: Command, cli: Cli) => void;
