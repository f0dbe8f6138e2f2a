import type { TSchema } from 'typebox';
import type { UserRow } from '../db/types.js';
import { compileBodyValidator } from '../plugins/validation.js';
import { validationDetails } from '../plugins/errors.js';
import { CliError, usageError } from './cli-error.js';
import type { CliServices } from './services.js';

/**
 * The account a command names: by id, or by username (ignoring case, as sign-in does; an all-digit username
 * when no id matches). Not found is a
 * failure (exit 1): the same command works once the account exists.
 */
export async function findAccount(services: Pick<CliServices, 'usersRepository'>, ref: string): Promise<UserRow> {
  const byId = /^[1-9]\d{0,15}$/.test(ref) ? await services.usersRepository.findById(Number(ref)) : undefined;
  const row = byId ?? (await services.usersRepository.findByUsername(ref));
  if (!row) throw new CliError(`no account with the id or username ${ref}`, 1, 'NOT_FOUND');
  return row;
}

/**
 * What the CLI writes through a service is first checked against the schema the API validates the same
 * write with, so that an operator cannot create what a client could not (a 2-character username, a
 * 7-character password). Bad input is bad usage (exit 2), each offending field named.
 */
export function checkInput<T>(schema: TSchema, input: T, what: string): T {
  const validate = compileBodyValidator(schema);
  if (validate(input)) return input;
  throw usageError(`${what} is invalid`, validationDetails(validate.errors ?? [], 'body'));
}
