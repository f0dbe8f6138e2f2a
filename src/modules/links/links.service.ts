import type { Dialect } from '../../db/dialect.js';
import type { Transaction } from 'kysely';
import type { Database, LinkRow } from '../../db/types.js';
import { AppError, forbidden, notFound, validationError } from '../../lib/app-error.js';
import { isAdmin, type Caller } from '../../lib/caller.js';
import type { Clock } from '../../lib/clock.js';
import { isoTime } from '../../lib/common.schemas.js';
import type { PageResult, Paginator } from '../../lib/pagination.js';
import type { UsersRepository } from '../users/users.repository.js';
import type { LinkCache, RedirectTarget } from './link-cache.js';
import type { CodeLookup, LinksRepository } from './links.repository.js';
import { LINK_SORT_COLUMNS, type Link, type LinkCreate, type LinkListQueryT } from './links.schemas.js';
import { checkOriginalUrl } from './original-url.js';
import { generateCode, isReservedCode } from './short-code.js';

export interface LinksServiceDeps {
  links: LinksRepository;
  users: Pick<UsersRepository, 'findById'>;
  dialect: Pick<Dialect, 'isUniqueViolation'>;
  clock: Clock;
  paginator: Paginator;
  cache: LinkCache;
  publicBaseUrl: string;
  /** the code source; tests pass a rigged one to force collisions */
  generate?: () => string;
}

/** Attempts before giving up on random codes. At 62^8 codes a second collision in a row is already ~1e-17. */
const GENERATE_ATTEMPTS = 8;
const SWEEP_BATCH = 500;

const isExpired = (row: Pick<LinkRow, 'expires_at'>, now: number): boolean => row.expires_at !== null && row.expires_at <= now;

const toTarget = (code: string, found: CodeLookup | undefined): RedirectTarget => {
  if (found?.id != null && found.original_url != null) {
    return { kind: 'link', id: found.id, code, url: found.original_url, expiresAt: found.expires_at };
  }
  return found?.retired_reason === 'expired' ? { kind: 'expired' } : { kind: 'missing' };
};

const unauthenticated = (): AppError =>
  new AppError('UNAUTHENTICATED', 'A bearer token is required', [], { 'WWW-Authenticate': 'Bearer realm="ferry"' });

export type LinksService = ReturnType<typeof createLinksService>;

const EXPIRED: RedirectTarget = { kind: 'expired' };

export function createLinksService(deps: LinksServiceDeps) {
  const { links, users, dialect, clock, paginator, cache, publicBaseUrl } = deps;
  const generate = deps.generate ?? (() => generateCode());
  const checkExpiry = (t: RedirectTarget): RedirectTarget =>
    t.kind === 'link' && t.expiresAt !== null && t.expiresAt <= clock.now() ? EXPIRED : t;

  const toLink = (row: LinkRow): Link => ({
    id: row.id,
    short_code: row.short_code,
    short_url: `${publicBaseUrl}/${row.short_code}`,
    original_url: row.original_url,
    user_id: row.user_id,
    expires_at: row.expires_at === null ? null : isoTime(row.expires_at),
    created_at: isoTime(row.created_at),
    click_count: Number(row.click_count),
  });

  /** A link as the API sees it: an expired link is gone at once, before the sweep removes its row. */
  async function findLive(code: string): Promise<LinkRow> {
    const row = await links.findByCode(code);
    if (!row || isExpired(row, clock.now())) throw notFound('Link');
    return row;
  }

  /** Owner or admin; an anonymous link (or one whose owner was deleted) only an admin (SPEC §6). */
  function assertMayManage(row: LinkRow, caller: Caller | null): void {
    if (!caller) throw unauthenticated();
    if (isAdmin(caller) || (row.user_id !== null && row.user_id === caller.userId)) return;
    throw forbidden(row.user_id === null ? 'Only an admin may manage an anonymous link' : 'Only the owner or an admin may manage this link');
  }

  function validateCreate(input: LinkCreate, now: number): { url: string; expiresAt: number | null } {
    const details = [];
    const url = checkOriginalUrl(input.original_url, publicBaseUrl);
    if (!url.ok) details.push({ field: 'original_url', message: url.reason });
    if (input.short_code !== undefined && isReservedCode(input.short_code)) {
      details.push({ field: 'short_code', message: 'is reserved: it names a path of this service' });
    }
    let expiresAt: number | null = null;
    if (input.expires_at != null) {
      expiresAt = Date.parse(input.expires_at);
      if (!Number.isFinite(expiresAt)) details.push({ field: 'expires_at', message: 'must be an ISO 8601 date-time' });
      else if (expiresAt <= now) details.push({ field: 'expires_at', message: 'must be in the future' });
    }
    if (details.length || !url.ok) throw validationError(details, 'Request body is invalid');
    return { url: url.url, expiresAt };
  }

  return {
    toLink,

    /**
     * A custom code is tried once (taken: 409). A random code is retried on collision; the unique index of
     * link_codes decides (never check-then-insert), and tombstoned codes are in that index too.
     */
    async create(input: LinkCreate, caller: Caller | null, tx?: Transaction<Database>): Promise<LinkRow> {
      const now = clock.now();
      const { url, expiresAt } = validateCreate(input, now);
      const row = { user_id: caller?.userId ?? null, original_url: url, expires_at: expiresAt, created_at: now };
      for (let attempt = 1; ; attempt += 1) {
        if (attempt > GENERATE_ATTEMPTS) throw new Error(`no free short code after ${GENERATE_ATTEMPTS} attempts`);
        const code = input.short_code ?? generate();
        if (input.short_code === undefined && isReservedCode(code)) continue;
        try {
          const created = await links.insert({ ...row, short_code: code }, tx);
          cache.invalidate(code); // drop a cached "missing" answer for this code
          return created;
        } catch (err) {
          if (!dialect.isUniqueViolation(err)) throw err;
          if (input.short_code !== undefined) {
            throw new AppError('CONFLICT', 'This short code is taken', [{ field: 'short_code', message: 'is already taken' }]);
          }
        }
      }
    },

    get: findLive,

    async remove(code: string, caller: Caller | null): Promise<void> {
      const row = await findLive(code);
      assertMayManage(row, caller);
      const removed = await links.retire(row.id, row.short_code, 'deleted', clock.now());
      cache.invalidate(code);
      if (!removed) throw notFound('Link');
    },

    /** Stats: the owner or an admin; anyone for an anonymous link (SPEC §6). */
    async getForStats(code: string, caller: Caller | null): Promise<LinkRow> {
      const row = await findLive(code);
      if (row.user_id !== null) assertMayManage(row, caller);
      return row;
    },

    async listForUser(userId: number, query: LinkListQueryT, requestUrl: string, cursorOnly = false): Promise<PageResult<Link>> {
      if (!(await users.findById(userId))) throw notFound('User');
      const list = paginator.resolve(query, LINK_SORT_COLUMNS, { user: userId }, cursorOnly);
      const { rows, total } = await links.listByUser(userId, clock.now(), list);
      const sortValue = (r: LinkRow): string | number => r[list.sortColumn as keyof LinkRow] as number;
      return paginator.page(rows, list, total, requestUrl, toLink, sortValue);
    },

    /**
     * The redirect's lookup: the cache answers synchronously; a miss asks the database once and caches the
     * answer, negative ones included. Expiry is judged here on every call against the clock, not by the
     * cache, so a link stops redirecting at its expires_at exactly, sweep or no sweep.
     */
    resolve(code: string): RedirectTarget | Promise<RedirectTarget> {
      const hit = cache.get(code);
      if (hit) return checkExpiry(hit);
      const epoch = cache.epoch();
      const found = links.lookupCode(code);
      const store = (f: CodeLookup | undefined): RedirectTarget => {
        const target = toTarget(code, f);
        cache.set(code, target, epoch);
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
          if (await links.retire(row.id, row.short_code, 'expired', now)) swept += 1;
          cache.invalidate(row.short_code);
        }
        if (expired.length < SWEEP_BATCH) return swept;
      }
    },
  };
}
