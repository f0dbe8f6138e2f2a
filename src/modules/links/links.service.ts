import type { Dialect } from '../../db/dialect.js';
import type { Transaction } from 'kysely';
import type { Database, LinkRow } from '../../db/types.js';
import { AppError, forbidden, notFound } from '../../lib/app-error.js';
import { isAdmin, keyAllowsDomain, type Caller } from '../../lib/caller.js';
import type { Clock } from '../../lib/clock.js';
import type { PageResult, Paginator } from '../../lib/pagination.js';
import { assertIfMatch } from '../../lib/etag.js';
import type { PasswordHasher, UsersRepository } from '../users/index.js';
import type { BlockedHosts } from './blocked-hosts.js';
import { createLinkDomains, type LinkDomainsDeps } from './link-domains.js';
import { createLinkInput, type LinkDraft } from './link-input.js';
import { moderationChanges } from './link-moderation.js';
import { linkRecord } from './link-record.js';
import { renderQr, type QrFormat } from './link-qr.js';
import { linkCacheKey, type LinkCache, type RedirectTarget } from './link-cache.js';
import { AliasTakenError, type CodeLookup, type LinksRepository } from './links.repository.js';
import { cacheKeysOf, toTarget } from './redirect-target.js';
import { LINK_SORT_COLUMNS, NULL_IS_LAST, type Link, type LinkCreate, type LinkListQueryT, type LinkPatch } from './links.schemas.js';
import { generateCode, isReservedCode } from './short-code.js';

export interface LinksServiceDeps {
  links: LinksRepository;
  users: Pick<UsersRepository, 'findById'>;
  dialect: Pick<Dialect, 'isUniqueViolation'>;
  clock: Clock;
  paginator: Paginator;
  cache: LinkCache;
  publicBaseUrl: string;
  /** the port the service listens on: a loopback URL on it is this service (original-url.ts) */
  listenPort?: number;
  passwords: Pick<PasswordHasher, 'hash'>;
  /** ANONYMOUS_LINKS: whether a creation without a credential is allowed (default: yes) */
  anonymousLinks?: boolean;
  /** BLOCKED_HOSTS_FILE's list: targets on these hosts are refused (default: none) */
  blockedHosts?: Pick<BlockedHosts, 'isBlocked'>;
  /** the code source; tests pass a rigged one to force collisions */
  generate?: () => string;
  /** the domains links live on (SPEC §19): names, owners, short URLs; default: none but the default domain */
  domains?: LinkDomainsDeps['registry'];
}

/** Attempts before giving up on random codes. At 62^8 codes a second collision in a row is already ~1e-17. */
const GENERATE_ATTEMPTS = 8;
const SWEEP_BATCH = 500;

/** A link's ETag follows its version, so If-Match is checked without serialising (like users'). */
export const linkEtag = (row: Pick<LinkRow, 'id' | 'version'>): string => `"link-${row.id}-v${row.version}"`;

const isExpired = (row: Pick<LinkRow, 'expires_at'>, now: number): boolean => row.expires_at !== null && row.expires_at <= now;

/** A taken alias answers as a taken custom code does (SPEC §6, §20): 409 CONFLICT. */
const aliasTaken = (err: AliasTakenError): AppError =>
  new AppError('CONFLICT', 'This alias is taken', [{ field: 'aliases', message: `${JSON.stringify(err.alias)} is already taken on this domain (by a code or an alias, or it was and stays retired)` }]);

const unauthenticated = (): AppError =>
  new AppError('UNAUTHENTICATED', 'A bearer token is required', [], { 'WWW-Authenticate': 'Bearer realm="ferry"' });

export interface LinkWriteOptions {
  caller: Caller | null;
  ifMatch?: string | undefined;
  /** the request's `?domain=` (absent: the default domain) */
  domain?: string | undefined;
}

export type LinksService = ReturnType<typeof createLinksService>;

const EXPIRED: RedirectTarget = { kind: 'expired' };
const NO_DOMAINS: LinkDomainsDeps['registry'] = { byIdOf: () => undefined, byHostname: () => undefined, reload: async () => undefined, reloadHostname: async () => undefined };

export function createLinksService(deps: LinksServiceDeps) {
  const { links, users, dialect, clock, paginator, cache, publicBaseUrl } = deps;
  const anonymousLinks = deps.anonymousLinks ?? true;
  const domains = createLinkDomains({ registry: deps.domains ?? NO_DOMAINS, publicBaseUrl, clock });
  const generate = deps.generate ?? (() => generateCode());
  const input = createLinkInput({
    publicBaseUrl, passwords: deps.passwords, ...(deps.listenPort !== undefined ? { listenPort: deps.listenPort } : {}),
    ...(deps.blockedHosts ? { isBlocked: (host: string) => deps.blockedHosts!.isBlocked(host) } : {}),
  });
  const checkExpiry = (t: RedirectTarget): RedirectTarget =>
    t.kind === 'link' && t.expiresAt !== null && t.expiresAt <= clock.now() ? EXPIRED : t;

  const toLink = linkRecord(publicBaseUrl, domains);

  /**
   * A link as the API sees it: an expired link is gone at once, before the sweep removes its row. `domain`
   * is the `?domain=` of the request (absent: the default domain); an unknown one has no links.
   */
  async function findLive(code: string, domain?: string): Promise<LinkRow> {
    const domainId = await domains.idOf(domain);
    const row = domainId === null ? undefined : await links.findByCode(code, domainId);
    if (!row || isExpired(row, clock.now())) throw notFound('Link');
    return row;
  }

  /** Owner or admin; an anonymous link (or one whose owner was deleted) only an admin (SPEC §6). */
  function assertMayManage(row: LinkRow, caller: Caller | null): void {
    if (!caller) throw unauthenticated();
    assertKeyDomain(row, caller);
    if (isAdmin(caller) || (row.user_id !== null && row.user_id === caller.userId)) return;
    throw forbidden(row.user_id === null ? 'Only an admin may manage an anonymous link' : 'Only the owner or an admin may manage this link');
  }

  /**
   * Who may read a link (SPEC §17): an anonymous link, anyone; an owned link, its owner (or the owner's key
   * with links:read, checked by the route's access policy) and admins. A link that guards its target with a
   * password or a visit limit never shows it to anyone else, even when nobody owns it (any more): the lookup
   * must not give away what the redirect withholds.
   */
  /** An API key limited to domains (SPEC §19) acts on their links only. */
  function assertKeyDomain(row: LinkRow, caller: Caller | null): void {
    if (!keyAllowsDomain(caller, row.domain_id)) throw forbidden("This API key is limited to other domains than this link's");
  }

  function assertMayRead(row: LinkRow, caller: Caller | null): void {
    assertKeyDomain(row, caller);
    if (isAdmin(caller) || (row.user_id !== null && row.user_id === caller?.userId)) return;
    if (row.user_id !== null) throw forbidden('Only the owner or an admin may read this link');
    if (row.password_hash !== null || row.max_visits !== null) throw forbidden("Only an admin may read this link: its target is behind a password or a visit limit");
  }

  /**
   * A custom code is tried once (taken: 409). A random code is retried on collision; the unique index of
   * link_codes decides (never check-then-insert), and tombstoned codes are in that index too.
   */
  async function insertDraft(draft: LinkDraft, caller: Caller | null, tx?: Transaction<Database>): Promise<LinkRow> {
    const now = clock.now();
    const domainId = await domains.usableBy(draft.domain, caller);
    const row = { ...draft.fields, domain_id: domainId, user_id: caller?.userId ?? null, created_at: now, updated_at: now };
    for (let attempt = 1; ; attempt += 1) {
      if (attempt > GENERATE_ATTEMPTS) throw new Error(`no free short code after ${GENERATE_ATTEMPTS} attempts`);
      const code = draft.shortCode ?? generate();
      if (draft.shortCode === undefined && isReservedCode(code)) continue;
      try {
        const created = await links.insert({ ...row, short_code: code }, tx);
        for (const key of cacheKeysOf(created)) cache.invalidate(key); // drop cached "missing" answers for its names
        return created;
      } catch (err) {
        if (err instanceof AliasTakenError) throw aliasTaken(err);
        if (!dialect.isUniqueViolation(err)) throw err;
        if (draft.shortCode !== undefined) {
          throw new AppError('CONFLICT', 'This short code is taken', [{ field: 'short_code', message: 'is already taken' }]);
        }
      }
    }
  }

  /**
   * Who may create links (SPEC §18): anyone unless ANONYMOUS_LINKS=false, and of the signed-in only active
   * accounts (a pending one waits for an admin's approval, as orders do).
   */
  function assertMayCreate(caller: Caller | null): void {
    if (!caller) {
      if (!anonymousLinks) throw unauthenticated();
      return;
    }
    if (caller.status !== 'active') throw new AppError('ACCOUNT_NOT_ACTIVE', `Only an active account may create links; this one is ${caller.status}`);
  }

  function prepare(body: LinkCreate, caller: Caller | null): Promise<LinkDraft> {
    assertMayCreate(caller);
    return input.prepare(body, clock.now(), caller === null);
  }

  return {
    toLink,
    /** the domains links live on, as the links module sees them (the admin list and the statistics filter by them) */
    domains,
    assertMayCreate,

    /**
     * Checks the caller's right to create and a creation body, and hashes its password, outside any
     * transaction (scrypt takes tens of milliseconds on the thread pool; a transaction held meanwhile would
     * hold the embedded engine's one connection too).
     */
    prepare,

    async create(body: LinkCreate | LinkDraft, caller: Caller | null, tx?: Transaction<Database>): Promise<LinkRow> {
      const draft = 'prepared' in body ? body : await prepare(body, caller);
      return insertDraft(draft, caller, tx);
    },

    /** The link for a reader (SPEC §17): see assertMayRead. */
    async get(code: string, caller: Caller | null, domain?: string): Promise<LinkRow> {
      const row = await findLive(code, domain);
      assertMayRead(row, caller);
      return row;
    },

    /** The short URL as a QR code (whoever may read the link may have it). */
    async qr(code: string, caller: Caller | null, format: QrFormat, size: number, domain?: string): Promise<string | Buffer> {
      const row = await findLive(code, domain);
      assertMayRead(row, caller);
      return renderQr(domains.shortUrl(row), format, size);
    },

    /** Owner or admin (anonymous links: admin only): what PATCH, DELETE and the click records need. */
    async getForOwner(code: string, caller: Caller | null, domain?: string): Promise<LinkRow> {
      const row = await findLive(code, domain);
      assertMayManage(row, caller);
      return row;
    },

    /**
     * PATCH (JSON merge patch, SPEC §13; `disabled` by admins only, SPEC §18). With If-Match the update is conditional on the version read, so a
     * change that lands in between is a 412, never a lost update. The cache entry is dropped before the
     * answer: from then on this instance redirects to the new target (others within a second, see
     * infra/pg-link-cache-bus.ts).
     */
    async patch(code: string, body: LinkPatch, opts: LinkWriteOptions): Promise<LinkRow> {
      const row = await findLive(code, opts.domain);
      assertMayManage(row, opts.caller);
      assertIfMatch(opts.ifMatch, linkEtag(row));
      const moderation = moderationChanges(row, body, opts.caller, clock.now());
      const changes = { ...(await input.changes(row, body, clock.now())), ...moderation };
      if (body.domain !== undefined) {
        const domainId = await domains.usableBy(body.domain ?? undefined, opts.caller);
        if (domainId !== row.domain_id) changes.domain_id = domainId;
      }
      if (Object.keys(changes).length === 0) return row; // nothing to merge: no new version
      const updated = await links.update(row, changes, opts.ifMatch === undefined ? null : row.version, clock.now()).catch((err: unknown) => {
        if (err instanceof AliasTakenError) throw aliasTaken(err);
        if (!dialect.isUniqueViolation(err)) throw err;
        throw new AppError('CONFLICT', 'This short code is taken on that domain', [{ field: 'domain', message: 'already has a link (or had one) with this code' }]);
      });
      for (const key of cacheKeysOf(row)) cache.invalidate(key);
      if (updated) for (const key of cacheKeysOf(updated)) cache.invalidate(key);
      if (updated) return updated;
      const now = await findLive(code, opts.domain); // gone, or changed since it was read
      throw new AppError('PRECONDITION_FAILED', 'If-Match does not match the current representation', [{ field: 'If-Match', message: `the current ETag is ${linkEtag(now)}` }]);
    },

    async remove(code: string, caller: Caller | null, domain?: string): Promise<void> {
      const row = await findLive(code, domain);
      assertMayManage(row, caller);
      const removed = await links.retire(row, 'deleted', clock.now());
      for (const key of cacheKeysOf(row)) cache.invalidate(key);
      if (!removed) throw notFound('Link');
    },

    /** Stats: the owner or an admin; anyone for an anonymous link (SPEC §6). */
    async getForStats(code: string, caller: Caller | null, domain?: string): Promise<LinkRow> {
      const row = await findLive(code, domain);
      if (row.user_id !== null) assertMayManage(row, caller);
      return row;
    },

    /** `keyDomains`: the domains of the caller's API key, when it is limited to some (only their links are listed). */
    async listForUser(userId: number, query: LinkListQueryT, requestUrl: string, cursorOnly = false, keyDomains: readonly number[] | null = null): Promise<PageResult<Link>> {
      if (!(await users.findById(userId))) throw notFound('User');
      const filter = { tag: query.tag?.toLowerCase(), q: query.q, ...(await domains.listFilter(query.domain, keyDomains)) };
      const list = paginator.resolve(query, LINK_SORT_COLUMNS, { user: userId, ...filter }, cursorOnly, NULL_IS_LAST);
      const { rows, total } = await links.listByUser(userId, clock.now(), list, filter);
      await domains.ensureKnown(rows);
      const sortValue = (r: LinkRow): number => (r[list.sortColumn as keyof LinkRow] as number | null) ?? list.nullsAs!;
      return paginator.page(rows, list, total, requestUrl, toLink, sortValue);
    },

    /**
     * The redirect's lookup: the cache answers synchronously; a miss asks the database once and caches the
     * answer, negative ones included. Expiry is judged here on every call against the clock, not by the
     * cache, so a link stops redirecting at its expires_at exactly, sweep or no sweep.
     */
    resolve(code: string, domainId = 0): RedirectTarget | Promise<RedirectTarget> {
      // `code` may be an alias: one namespace, one lookup, one cache entry per name (SPEC §20).
      const key = linkCacheKey(domainId, code);
      const hit = cache.get(key);
      if (hit) return checkExpiry(hit);
      const epoch = cache.epoch();
      const found = links.lookupCode(code, domainId);
      const store = (f: CodeLookup | undefined): RedirectTarget => {
        const target = toTarget(code, f);
        cache.set(key, target, epoch);
        return checkExpiry(target);
      };
      return found instanceof Promise ? found.then(store) : store(found);
    },

    /** Deletes expired links and leaves their codes as tombstones (410, never reissued). */
    async sweepExpired(): Promise<number> {
      let swept = 0;
      for (;;) {
        const now = clock.now();
        const expired = await links.findExpired(now, SWEEP_BATCH);
        for (const row of expired) {
          if (await links.retire(row, 'expired', now)) swept += 1;
          for (const key of cacheKeysOf(row)) cache.invalidate(key);
        }
        if (expired.length < SWEEP_BATCH) return swept;
      }
    },
  };
}
