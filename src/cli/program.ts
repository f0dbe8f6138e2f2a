import { Command, CommanderError, type OutputConfiguration } from 'commander';
import { ConfigError, loadConfig } from '../config.js';
import { AppError } from '../lib/app-error.js';
import { CliError, EXIT, usageError, type ExitStatus } from './cli-error.js';
import { commandModules } from './commands/index.js';
import type { Cli, CommandContext } from './command.js';
import { createOutput, type OutputStream, type OutputStreams } from './output.js';
import { openServices, type CliServices } from './services.js';

/**
 * Everything an invocation of `ferry` takes from the world around it. The program reads nothing of its process
 * (process.env, process.stdout, signals): ferry.ts passes the process's own, a test or another program its own.
 */
export interface CliEnvironment extends OutputStreams {
  argv: readonly string[];
  env: Record<string, string | undefined>;
  stdin: CommandContext['stdin'];
  /** the operator's interrupts (ferry.ts: SIGINT); absent, nothing interrupts a command */
  onInterrupt?: CommandContext['onInterrupt'];
}

const NO_INTERRUPTS: CommandContext['onInterrupt'] = () => () => undefined;

/**
 * Commander's output, on this invocation's streams and environment: by default it writes to the process's, wraps
 * help to their width and colours by the process's variables (NO_COLOR, FORCE_COLOR).
 */
function programOutput(env: CliEnvironment): OutputConfiguration {
  // 80 columns where the output is no terminal (a pipe, a file), as commander's default does
  const width = (stream: OutputStream) => (stream.isTTY && stream.columns ? stream.columns : 80);
  const colours = (stream: OutputStream) => {
    const { NO_COLOR, FORCE_COLOR, CLICOLOR_FORCE } = env.env;
    if (NO_COLOR || FORCE_COLOR === '0' || FORCE_COLOR === 'false') return false;
    if (FORCE_COLOR || CLICOLOR_FORCE !== undefined) return true;
    return Boolean(stream.isTTY && stream.hasColors?.(env.env));
  };
  return {
    writeOut: (s) => env.stdout.write(s),
    writeErr: (s) => env.stderr.write(s),
    getOutHelpWidth: () => width(env.stdout),
    getErrHelpWidth: () => width(env.stderr),
    getOutHasColors: () => colours(env.stdout),
    getErrHasColors: () => colours(env.stderr),
  };
}

/** What any error thrown by a command means for the operator. */
function toCliError(err: unknown): CliError {
  if (err instanceof CliError) return err;
  if (err instanceof ConfigError) return usageError(`configuration: ${err.message}`);
  if (err instanceof AppError) {
    const status = err.code === 'VALIDATION_ERROR' ? EXIT.usage : EXIT.failed;
    return new CliError(err.message, status, err.code, err.details);
  }
  return new CliError(err instanceof Error ? err.message : String(err), EXIT.failed, 'FAILED');
}

export function createProgram(env: CliEnvironment, onExit: (status: ExitStatus) => void): Command {
  const program = new Command('ferry')
    .description(
      'Operate a Ferry instance: accounts, API keys, links, backups, migrations. Reads the same environment variables as the server.',
    )
    .option('--json', 'print results as JSON (for scripts); errors go to stderr as JSON')
    .showHelpAfterError('(add --help for usage)')
    .configureHelp({ showGlobalOptions: true, sortSubcommands: true })
    .configureOutput(programOutput(env))
    .exitOverride();

  const cli: Cli = {
    action:
      (run) =>
      async (...args) => {
        const command = args[args.length - 1] as Command;
        const out = createOutput(env, Boolean(command.optsWithGlobals().json));
        let services: Promise<CliServices> | null = null;
        try {
          const config = loadConfig(env.env);
          const ctx: CommandContext = {
            out,
            config,
            services: () => (services ??= openServices(config, (line) => out.warn(line))),
            stdin: env.stdin,
            onInterrupt: env.onInterrupt ?? NO_INTERRUPTS,
          };
          await run(ctx, ...args);
          onExit(EXIT.done);
        } catch (err) {
          const failure = toCliError(err);
          out.error(failure);
          onExit(failure.exitStatus);
        } finally {
          if (services)
            await (services as Promise<CliServices>).then(
              (s) => s.close(),
              () => undefined,
            );
        }
      },
  };
  for (const register of commandModules) register(program, cli);
  return program;
}

/** Runs one invocation of `ferry` and resolves with its exit status (0 done, 1 failed, 2 bad usage). */
export async function runCli(env: CliEnvironment): Promise<ExitStatus> {
  let status: ExitStatus = EXIT.done;
  const program = createProgram(env, (s) => {
    status = s;
  });
  try {
    await program.parseAsync([...env.argv], { from: 'user' });
  } catch (err) {
    if (!(err instanceof CommanderError)) throw err;
    // --help and --version end with 0; every other complaint of the parser is bad usage.
    return err.code === 'commander.helpDisplayed' || err.code === 'commander.version' ? EXIT.done : EXIT.usage;
  }
  return status;
}
