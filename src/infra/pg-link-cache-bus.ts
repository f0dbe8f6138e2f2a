import type { FastifyBaseLogger } from 'fastify';
import pg from 'pg';

/** The channel on which every change of a link is announced (links.repository.ts, in the change's transaction). */
export const LINK_CHANGES_CHANNEL = 'ferry_link_changes';

/**
 * A change's notification: `<origin> <code>`. The origin names the app instance that made the change, which
 * has already dropped the code itself, after its commit; hearing its own change again later would only drop
 * an entry that a visit has filled since with the new state.
 */
export const changeMessage = (origin: string, code: string): string => `${origin} ${code}`;

/**
 * The "code" of a message that says codes were added (an import's batch), not which: every cached "missing"
 * is dropped. `+` is no code's character, so it names no code.
 */
export const CODES_ADDED = '+';

/** Applies a change message's code to a cache. */
export function applyChange(cache: Pick<ChangeFeedCache, 'forget' | 'forgetMisses'>, code: string): void {
  if (code === CODES_ADDED) cache.forgetMisses();
  else cache.forget(code);
}

/** A domain's change (SPEC §19) on the same channel: `<origin> !domain <id>` (no link cache key starts with `!`). */
const DOMAIN_MARK = '!domain ';
export const domainChangeMessage = (origin: string, id: number): string => `${origin} ${DOMAIN_MARK}${id}`;

/** What the feed needs of the domain registry (modules/domains): reload one domain, or all of them. */
export interface ChangeFeedDomains {
  reload(id: number): Promise<void>;
  reloadAll(): Promise<void>;
}

/** What the feed needs of the redirect cache (modules/links/link-cache.ts). */
export interface ChangeFeedCache {
  forget(code: string): void;
  forgetMisses(): void;
  clear(): void;
  gate(isTrusted: () => boolean): void;
}

export interface PgLinkCacheBusOptions {
  connectionString: string;
  /** this instance's origin in change messages (its own changes are not heard again) */
  origin: string;
  cache: ChangeFeedCache;
  /** the domain registry, told of domains changed elsewhere; none: only links are followed */
  domains?: ChangeFeedDomains;
  log: FastifyBaseLogger;
  /** how often the listening connection proves that it is alive and caught up */
  heartbeatMs?: number;
  /** how long after the last proof the cache is still served from; the cross-instance staleness bound */
  trustMs?: number;
}

const HEARTBEAT_MS = 200;
const TRUST_MS = 750;

// A failed reload is not fatal: the next reconnection reloads every domain.
const reloadDomain = async ({ domains, log }: PgLinkCacheBusOptions, id: number): Promise<void> => {
  await domains?.reload(id).catch((err: unknown) => log.warn({ err, domain: id }, 'could not reload a changed domain'));
};

/**
 * A connection listening on the change channel: each change heard from another instance applied to the cache
 * (or its domain reloaded); the cache cleared and the domains reloaded once it listens.
 */
async function listen(opts: PgLinkCacheBusOptions, trustMs: number): Promise<pg.Client> {
  const { cache } = opts;
  const c = new pg.Client({ connectionString: opts.connectionString, application_name: 'ferry-link-cache', keepAlive: true, query_timeout: trustMs });
  c.on('error', () => undefined); // a broken connection fails the next heartbeat, which replaces it
  const own = `${opts.origin} `;
  c.on('notification', (message) => {
    const payload = message.payload;
    if (message.channel !== LINK_CHANGES_CHANNEL || !payload || payload.startsWith(own)) return;
    const space = payload.indexOf(' ');
    if (space <= 0) return;
    const key = payload.slice(space + 1);
    if (key.startsWith(DOMAIN_MARK)) void reloadDomain(opts, Number(key.slice(DOMAIN_MARK.length)));
    else applyChange(cache, key);
  });
  try {
    await c.connect();
    await c.query(`listen ${LINK_CHANGES_CHANNEL}`);
  } catch (err) {
    void c.end().catch(() => undefined);
    throw err;
  }
  cache.clear(); // whatever changed before this LISTEN was not heard
  await opts.domains?.reloadAll();
  return c;
}

/**
 * Link-cache invalidation across instances (SPEC §13: another instance follows a change within 1 s), on
 * PostgreSQL's LISTEN/NOTIFY rather than a side channel, because of two properties a side channel lacks:
 *
 * - A NOTIFY sent inside the transaction of a change is delivered if and only if that transaction commits,
 *   to every session listening at that moment, in commit order. The change and its announcement cannot part:
 *   no instance killed between commit and publish, no publish that fails after the commit.
 * - The one way to miss a notification is not to be listening: the connection broke. So every HEARTBEAT_MS
 *   the listening connection runs `select 1`; PostgreSQL sends pending notifications before it reads the next
 *   command, so an answer proves that every change committed before the query was sent has been seen. The
 *   cache is served from only while the last proof is younger than TRUST_MS (LinkCache.gate); otherwise
 *   every visit reads the database. A new connection clears the cache before it is trusted again.
 *
 * So a visit on another instance sees a change at most TRUST_MS after its commit (in practice a millisecond
 * or two: the notification itself), whatever fails. test/scaleout/link-cache-invalidation.test.ts kills the
 * listening connection in the middle of a change.
 */
export async function createPgLinkCacheBus(opts: PgLinkCacheBusOptions) {
  const { cache, log } = opts;
  const heartbeatMs = opts.heartbeatMs ?? HEARTBEAT_MS;
  const trustMs = opts.trustMs ?? TRUST_MS;
  let client: pg.Client | null = null;
  let provenAt = Number.NEGATIVE_INFINITY;
  let timer: NodeJS.Timeout | null = null;
  let closed = false;
  let failing = false;

  cache.gate(() => performance.now() - provenAt < trustMs);

  async function heartbeat(): Promise<void> {
    try {
      client ??= await listen(opts, trustMs);
      const sentAt = performance.now();
      await client.query('select 1');
      provenAt = sentAt;
      if (failing) log.info('link-cache change feed: listening again; the redirect cache is used again');
      failing = false;
    } catch (err) {
      if (!failing) log.warn({ err }, 'link-cache change feed interrupted: redirects read the database until it is back');
      failing = true;
      const broken = client;
      client = null;
      void broken?.end().catch(() => undefined);
    }
  }

  let beating: Promise<void> = Promise.resolve();
  const loop = (): Promise<void> => {
    beating = heartbeat().then(() => {
      if (!closed) timer = setTimeout(() => void loop(), heartbeatMs);
    });
    return beating;
  };
  await loop();

  return {
    /** whether the cache may be served from now (tests) */
    trusted: (): boolean => performance.now() - provenAt < trustMs,
    async close(): Promise<void> {
      closed = true;
      if (timer) clearTimeout(timer);
      await beating;
      await client?.end().catch(() => undefined);
      client = null;
    },
  };
}
