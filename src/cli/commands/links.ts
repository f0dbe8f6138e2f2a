import type { Link, LinkModeration } from '../../modules/links/index.js';
import { findAccount } from '../accounts.js';
import { usageError } from '../cli-error.js';
import { table } from '../output.js';
import type { CommandContext, CommandModule } from '../command.js';
import type { CliServices } from '../services.js';

const STATUSES = ['active', 'expired', 'disabled'] as const;
const PAGE = 100;

interface ListOptions {
  q?: string;
  user?: string;
  tag?: string;
  status?: string;
  domain?: string;
  limit: string;
}

async function listLinks(ctx: CommandContext, opts: ListOptions): Promise<void> {
  const limit = Number(opts.limit);
  if (!Number.isInteger(limit) || limit < 1) throw usageError('--limit must be a positive integer');
  if (opts.status !== undefined && !(STATUSES as readonly string[]).includes(opts.status))
    throw usageError(`--status must be one of ${STATUSES.join(', ')}`);
  const services = await ctx.services();
  const userId = opts.user === undefined ? undefined : (await findAccount(services, opts.user)).id;
  const { moderation } = services;
  const filters = {
    sort: 'created_at',
    order: 'desc',
    ...(opts.q ? { q: opts.q } : {}),
    ...(opts.tag ? { tag: opts.tag } : {}),
    ...(opts.domain ? { domain: opts.domain } : {}),
    ...(userId ? { user_id: userId } : {}),
    ...(opts.status ? { status: opts.status } : {}),
  };
  const links: Link[] = [];
  let cursor: string | null = null;
  do {
    const query = {
      ...filters,
      limit: Math.min(PAGE, limit - links.length),
      ...(cursor ? { cursor } : {}),
    } as unknown as Parameters<LinkModeration['listAll']>[0];
    const page = await moderation.listAll(query, '/', true);
    links.push(...page.data);
    cursor = page.pagination.nextCursor;
  } while (cursor && links.length < limit);
  printLinks(ctx, links, await ownerNames(services, links), cursor !== null);
}

/** Each owner's username, looked up once. */
async function ownerNames(services: CliServices, links: readonly Link[]): Promise<Map<number, string>> {
  const names = new Map<number, string>();
  for (const id of new Set(links.flatMap((l) => (l.user_id === null ? [] : [l.user_id])))) {
    const user = await services.usersRepository.findById(id);
    if (user) names.set(id, user.username);
  }
  return names;
}

const BASE_UNKNOWN =
  "PUBLIC_BASE_URL is not set, so the default domain's address is unknown here: its links show their path (/CODE)";

function printLinks(
  ctx: CommandContext,
  links: readonly Link[],
  owners: ReadonlyMap<number, string>,
  more: boolean,
): void {
  // The CLI listens on no port: without PUBLIC_BASE_URL, http://HOST:PORT would be its own defaults, not the server's.
  const baseKnown = ctx.config.publicBaseUrlSet;
  const shortUrl = (l: Link) => (baseKnown || l.domain !== null ? l.short_url : null);
  const owner = (l: Link) => (l.user_id === null ? null : (owners.get(l.user_id) ?? null));
  const state = (l: Link) =>
    l.disabled ? 'disabled' : l.expires_at !== null && Date.parse(l.expires_at) <= Date.now() ? 'expired' : 'active';
  const cut = (text: string) => (text.length > 60 ? `${text.slice(0, 59)}…` : text);
  const records = links.map((l) => ({ ...l, short_url: shortUrl(l), owner_username: owner(l) }));
  if (!baseKnown && links.some((l) => l.domain === null)) ctx.out.warn(BASE_UNKNOWN);
  ctx.out.result(records, [
    // The short URL, not the bare code: a code names a link only together with its domain (SPEC §19).
    // Aliases beside it: the slugs people know a link by (SPEC §20), often not its code.
    ...table(
      ['SHORT URL', 'ALIASES', 'OWNER', 'CLICKS', 'STATUS', 'TARGET'],
      links.map((l) => [
        shortUrl(l) ?? `/${l.short_code}`,
        l.aliases.join(',') || '-',
        l.user_id === null ? '-' : (owner(l) ?? `#${l.user_id}`),
        String(l.click_count),
        state(l),
        cut(l.original_url),
      ]),
    ),
    `${links.length} link${links.length === 1 ? '' : 's'}${more ? ` (more: raise --limit)` : ''}`,
  ]);
}

/**
 * A moderation change through the service. Each change writes its event to the outbox in its transaction
 * (db/outbox.ts): a running server's redirect cache follows it, on either engine.
 */
async function moderate<T>(ctx: CommandContext, change: (moderation: LinkModeration) => Promise<T>): Promise<T> {
  return change((await ctx.services()).moderation);
}

/**
 * Disables the links to blocked hosts, clears the links' fallback_url (SPEC §24) and the domain fallbacks to
 * them; prints how many of each.
 */
async function disableBlocked(ctx: CommandContext): Promise<void> {
  if (!ctx.config.blockedHostsFile)
    throw usageError('BLOCKED_HOSTS_FILE is not set: it names the file of blocked host names, one a line');
  const links = await moderate(ctx, (m) => m.disableBlocked('cli'));
  const cleared = await (await ctx.services()).clearBlockedFallbacks();
  const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;
  ctx.out.result(
    { disabled: links.disabled, fallbacks_cleared: cleared, link_fallbacks_cleared: links.fallbacksCleared },
    [
      `disabled ${plural(links.disabled, 'link')} to blocked hosts`,
      `cleared ${plural(cleared, 'domain fallback')} to blocked hosts`,
      `cleared ${plural(links.fallbacksCleared, 'link fallback')} (fallback_url) to blocked hosts`,
    ],
  );
}

/** Codes are unique per domain (SPEC §19): the same code on two domains is two links. */
const DOMAIN_OPTION = 'the domain the code is on (absent: the default domain)';
const named = (code: string, domain: string | undefined): string =>
  domain === undefined ? code : `${code} on ${domain}`;

/** `ferry links list|disable|enable|disable-blocked`: moderation (SPEC §18) through the links' moderation service. */
export const linksCommand: CommandModule = (program, cli) => {
  const links = program
    .command('links')
    .description('every link: list, disable (visits answer 410), enable, disable those to blocked hosts');
  links
    .command('list')
    .description('links of every account, newest first by default')
    .option('--q <text>', 'only links whose URL, code, title or an alias contains this text')
    .option('--user <user>', "only this account's links (id or username)")
    .option('--tag <tag>', 'only links with this tag')
    .option('--status <status>', `only links in this state (${STATUSES.join(', ')})`)
    .option('--domain <host>', "only links on this domain (the default domain's host name for links without one)")
    .option('--limit <n>', 'at most this many', '100')
    .action(cli.action(listLinks));
  links
    .command('disable')
    .description(
      'disable a link: its visits answer 410 LINK_DISABLED (a running server sees it within a second or less) until it is enabled again',
    )
    .argument('<code>', 'the short code')
    .option('--domain <host>', DOMAIN_OPTION)
    .option('--reason <text>', 'why (shown to its owner)')
    .action(
      cli.action(async (ctx, code: string, opts: { reason?: string; domain?: string }) => {
        const row = await moderate(ctx, (m) => m.disable(code, opts.reason ?? null, opts.domain, 'cli'));
        ctx.out.result(
          { short_code: row.short_code, disabled: true, disabled_reason: row.disabled_reason },
          `${named(code, opts.domain)} is disabled${row.disabled_reason ? ` (${row.disabled_reason})` : ''}`,
        );
      }),
    );
  links
    .command('enable')
    .description('let a disabled link redirect again')
    .argument('<code>', 'the short code')
    .option('--domain <host>', DOMAIN_OPTION)
    .action(
      cli.action(async (ctx, code: string, opts: { domain?: string }) => {
        const row = await moderate(ctx, (m) => m.enable(code, opts.domain));
        ctx.out.result({ short_code: row.short_code, disabled: false }, `${named(code, opts.domain)} redirects again`);
      }),
    );
  links
    .command('disable-blocked')
    .description(
      'disable every link whose destination is on BLOCKED_HOSTS_FILE (a name blocks its subdomains), ' +
        "clear every link's fallback_url and every domain fallback to such a host, and print how many of each",
    )
    .action(cli.action(disableBlocked));
};
