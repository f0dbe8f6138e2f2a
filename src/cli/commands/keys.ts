import { ApiKeyCreateSchema, type ApiKey } from '../../modules/api-keys/index.js';
import { SCOPES } from '../../lib/scopes.js';
import { checkInput, findAccount } from '../accounts.js';
import { usageError } from '../cli-error.js';
import { table } from '../output.js';
import type { CommandContext, CommandModule } from '../command.js';

const collect = (value: string, previous: string[] = []): string[] => [
  ...previous,
  ...value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean),
];

async function createKey(
  ctx: CommandContext,
  ref: string,
  opts: { name: string; scope: string[]; expiresAt?: string },
): Promise<void> {
  const input = checkInput(
    ApiKeyCreateSchema,
    {
      name: opts.name,
      scopes: opts.scope as ApiKey['scopes'],
      ...(opts.expiresAt ? { expires_at: opts.expiresAt } : {}),
    },
    'the API key',
  );
  const services = await ctx.services();
  const user = await findAccount(services, ref);
  const created = await services.apiKeys.create(user.id, input, 'cli');
  ctx.out.result({ ...created, user_id: user.id }, [
    `API key ${created.id} (${created.name}) for ${user.username}, scopes ${created.scopes.join(' ')}:`,
    created.key,
    'It is shown this once; only a hash of it is kept.',
  ]);
}

async function listKeys(ctx: CommandContext, ref: string): Promise<void> {
  const services = await ctx.services();
  const user = await findAccount(services, ref);
  const keys: ApiKey[] = [];
  let cursor: string | null = null;
  do {
    const page = await services.apiKeys.list(user.id, { limit: 100, ...(cursor ? { cursor } : {}) }, '/', true);
    keys.push(...page.data);
    cursor = page.pagination.nextCursor;
  } while (cursor);
  ctx.out.result(keys, [
    ...table(
      ['ID', 'NAME', 'PREFIX', 'SCOPES', 'EXPIRES', 'LAST USED'],
      keys.map((k) => [
        String(k.id),
        k.name,
        `fry_${k.prefix}…`,
        k.scopes.join(' '),
        k.expires_at ?? 'never',
        k.last_used_at ?? 'never',
      ]),
    ),
    `${keys.length} key${keys.length === 1 ? '' : 's'} of ${user.username}`,
  ]);
}

/** `ferry keys create|list|revoke`: API keys (SPEC §14) through the API keys service. */
export const keysCommand: CommandModule = (program, cli) => {
  const keys = program.command('keys').description('API keys of an account');
  keys
    .command('create')
    .description('create an API key for an account and print it (shown this once)')
    .argument('<user>', "id or username of the key's owner")
    .requiredOption('--name <name>', 'what the key is for (1-64 characters)')
    .requiredOption(
      '--scope <scope>',
      `what the key may do, repeated or comma-separated: ${SCOPES.join(', ')}`,
      collect,
    )
    .option('--expires-at <instant>', 'ISO 8601 instant after which it stops working (default: never)')
    .action(cli.action(createKey));
  keys
    .command('list')
    .description('the API keys of an account (their ids, for revoke)')
    .argument('<user>', 'id or username')
    .action(cli.action(listKeys));
  keys
    .command('revoke')
    .description('revoke an API key: the next request made with it is refused, on every instance')
    .argument('<user>', "id or username of the key's owner")
    .argument('<key-id>', "the key's id (ferry keys list)")
    .action(
      cli.action(async (ctx, ref: string, keyId: string) => {
        if (!/^[1-9]\d{0,15}$/.test(keyId))
          throw usageError('<key-id> must be a positive integer (ferry keys list shows them)');
        const services = await ctx.services();
        const user = await findAccount(services, ref);
        await services.apiKeys.revoke(user.id, Number(keyId), 'cli');
        ctx.out.result({ revoked: Number(keyId), user_id: user.id }, `API key ${keyId} of ${user.username} revoked`);
      }),
    );
};
