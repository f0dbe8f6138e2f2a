import { toUser, UserCreateSchema } from '../../modules/users/index.js';
import { checkInput } from '../accounts.js';
import { readNewPassword } from '../password-input.js';
import type { CommandModule } from '../command.js';
import { OPERATOR } from '../services.js';

/**
 * `ferry admin create`: an active admin account. The first admin of an instance is made here or by
 * ADMIN_USERNAME, never through the API (SPEC §18); later admins may be made here too.
 */
export const adminCommand: CommandModule = (program, cli) => {
  const admin = program.command('admin').description('administrator accounts');
  admin
    .command('create')
    .description(
      'create an active admin account; the password is asked for at a terminal, or read from the first line of standard input',
    )
    .argument('<username>', '3-32 of A-Z a-z 0-9 . _ -')
    .option('--email <address>', 'e-mail address (default: <username>@admin.invalid)')
    .option('--name <name>', 'display name')
    .action(
      cli.action(async (ctx, username: string, opts: { email?: string; name?: string }) => {
        const email = opts.email ?? `${username.toLowerCase()}@admin.invalid`;
        // The name and address are checked before a password is asked for.
        checkInput(
          UserCreateSchema,
          { username, email, password: 'x'.repeat(8), ...(opts.name ? { name: opts.name } : {}) },
          'the account',
        );
        const password = await readNewPassword(ctx);
        const input = checkInput(
          UserCreateSchema,
          {
            username,
            email,
            password,
            role: 'admin' as const,
            status: 'active' as const,
            ...(opts.name ? { name: opts.name } : {}),
          },
          'the account',
        );
        const { users } = await ctx.services();
        const user = toUser(await users.create(input, OPERATOR));
        ctx.out.result(
          user,
          `created admin ${user.username} (id ${user.id}); sign in at /app or with POST /api/v1/tokens`,
        );
      }),
    );
};
