import type { ErrorDetail } from '../lib/app-error.js';

/**
 * Exit statuses of `ferry` (SPEC §18): done, failed, bad usage. "Bad usage" covers the command line (unknown
 * command or option, a missing or malformed argument) and a command that does not apply to this
 * configuration (a bad variable, `backup` with DATABASE_URL): the same invocation can never succeed.
 * "Failed" is work that was tried and did not happen (a user not found, a non-empty DATA_DIR, the database
 * unreachable): the same invocation may succeed once the world changes.
 */
export const EXIT = { done: 0, failed: 1, usage: 2 } as const;
export type ExitStatus = (typeof EXIT)[keyof typeof EXIT];

/** A command's failure with a message for people; `code` and `details` for --json. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitStatus: ExitStatus = EXIT.failed,
    readonly code = exitStatus === EXIT.usage ? 'USAGE' : 'FAILED',
    readonly details: ErrorDetail[] = [],
  ) {
    super(message);
    this.name = 'CliError';
  }
}

/** The command line asks for something this command cannot do (exit 2). */
export const usageError = (message: string, details: ErrorDetail[] = []): CliError =>
  new CliError(message, EXIT.usage, 'USAGE', details);
