import type { Command } from 'commander';
import { toUser, UserPatchSchema, type User, type UserPatch } from '../../modules/users/index.js';
import { checkInput, findAccount } from '../accounts.js';
import { usageError } from '../cli-error.js';
import { table } from '../output.js';
import { readNewPassword } from '../password-input.js';
import type { Cli, CommandContext, CommandModule } from '../command.js';
import { OPERATOR } from '../services.js';

const STATUSES = ['pending', 'active', 'suspended'];
const ROLES = ['user', 'admin'];

function choice(value: string | undefined, allowed: readonly string[], option: string): string | undefined {
  if (value !== undefined && !allowed.includes(value))
    throw usageError(`${option} must be one of ${allowed.join(', ')}`);
  return value;
}

async function listUsers(ctx: CommandContext, opts: { status?: string; role?: string }): Promise<void> {
  const query = { status: choice(opts.status, STATUSES, '--status'), role: choice(opts.role, ROLES, '--role') } as {
    status?: User['status'];
    role?: User['role'];
  };
  const { users } = await ctx.services();
  const all: User[] = [];
  let cursor: string | null = null;
  do {
    const page = await users.list({ ...query, limit: 100, ...(cursor ? { cursor } : {}) }, '/', true);
    all.push(...page.data);
    cursor = page.pagination.nextCursor;
  } while (cursor);
  ctx.out.result(all, [
    ...table(
      ['ID', 'USERNAME', 'EMAIL', 'ROLE', 'STATUS', 'CREATED'],
      all.map((u) => [String(u.id), u.username, u.email, u.role, u.status, u.createdAt]),
    ),
    `${all.length} account${all.length === 1 ? '' : 's'}`,
  ]);
}

/** A change of one account through the users service (its rules hold: LAST_ADMIN, token revocation). */
async function changeAccount(
  ctx: CommandContext,
  ref: string,
  patch: UserPatch,
  done: (u: User) => string,
): Promise<void> {
  const services = await ctx.services();
  const row = await findAccount(services, ref);
  const user = toUser(await services.users.patch(row.id, patch, { caller: OPERATOR }));
  ctx.out.result(user, done(user));
}

function statusCommand(users: Command, cli: Cli, name: string, status: User['status'], description: string): void {
  users
    .command(name)
    .description(description)
    .argument('<user>', 'id or username')
    .action(
      cli.action(async (ctx, ref: string) => {
        await changeAccount(
          ctx,
          ref,
          { status },
          (u) => `${u.username} (id ${u.id}) is ${u.status}; tokens issued before now no longer work`,
        );
      }),
    );
}

/** SPEC §23: an account locked out of its second factor (a lost device, no recovery code left) signs in again. */
async function resetTwoFactor(ctx: CommandContext, ref: string): Promise<void> {
  const services = await ctx.services();
  const row = await findAccount(services, ref);
  const wasOn = await services.twoFactor.reset(row.id, 'cli');
  ctx.out.result(
    { id: row.id, username: row.username, two_factor: 'off', was_on: wasOn },
    wasOn
      ? `two-factor sign-in of ${row.username} (id ${row.id}) is off: they sign in with their password and may set it up again`
      : `${row.username} (id ${row.id}) had no two-factor sign-in; nothing changed`,
  );
}

/** `ferry users list|activate|suspend|set-password|reset-2fa`. */
export const usersCommand: CommandModule = (program, cli) => {
  const users = program
    .command('users')
    .description('accounts: list them, activate or suspend one, reset a password or a second factor');
  users
    .command('list')
    .description('every account, oldest first')
    .option('--status <status>', `only accounts in this status (${STATUSES.join(', ')})`)
    .option('--role <role>', `only accounts with this role (${ROLES.join(', ')})`)
    .action(cli.action(listUsers));
  statusCommand(users, cli, 'activate', 'active', 'activate an account (a pending sign-up, or a suspended account)');
  statusCommand(users, cli, 'suspend', 'suspended', 'suspend an account: its tokens and API keys stop working at once');
  users
    .command('set-password')
    .description(
      "set an account's password (a forgotten admin password, too): asked for at a terminal, or the first line of standard input; the account's earlier tokens stop working",
    )
    .argument('<user>', 'id or username')
    .action(
      cli.action(async (ctx, ref: string) => {
        const services = await ctx.services();
        await findAccount(services, ref); // before the password is asked for
        const password = await readNewPassword(ctx);
        const patch = checkInput(UserPatchSchema, { password }, 'the password');
        await changeAccount(
          ctx,
          ref,
          patch,
          (u) => `password of ${u.username} (id ${u.id}) changed; tokens issued before now no longer work`,
        );
      }),
    );
  users
    .command('reset-2fa')
    .description(
      "turn off an account's two-factor sign-in (a lost authenticator and no recovery code): it signs in with its password again",
    )
    .argument('<user>', 'id or username')
    .action(cli.action(resetTwoFactor));
};
