import type { Dialect } from '../../db/dialect.js';
import type { DomainRow } from '../../db/types.js';
import { AppError, forbidden, notFound, validationError, type ErrorDetail } from '../../lib/app-error.js';
import { isAdmin, keyAllowsDomain, type Caller } from '../../lib/caller.js';
import type { Clock } from '../../lib/clock.js';
import { isoTime } from '../../lib/common.schemas.js';
import { assertIfMatch } from '../../lib/etag.js';
import type { PageResult, Paginator } from '../../lib/pagination.js';
import { randomAlphanumeric } from '../../lib/random-text.js';
import type { UsersRepository } from '../users/index.js';
import { STOP_AFTER_FAILING_MS, toEntry, type DomainRegistry } from './domain-registry.js';
import { httpPathOf, txtNameOf, txtValueOf, type DomainChecker } from './domain-verification.js';
import type { DomainChanges, DomainsRepository } from './domains.repository.js';
import { DOMAIN_SORT_COLUMNS, type Domain, type DomainCreate, type DomainListQueryT, type DomainPatch } from './domains.schemas.js';
import { checkFallbackUrl } from './fallback-url.js';
import { normalizeHostname } from './hostname.js';

export interface DomainsServiceDeps {
  domains: DomainsRepository;
  registry: DomainRegistry;
  users: Pick<UsersRepository, 'findById'>;
  checker: DomainChecker;
  dialect: Pick<Dialect, 'isUniqueViolation'>;
  clock: Clock;
  paginator: Paginator;
  /** the default domain's host (PUBLIC_BASE_URL's): never a domain of its own */
  defaultHost: string;
}

export const domainEtag = (row: Pick<DomainRow, 'id' | 'version'>): string => `"domain-${row.id}-v${row.version}"`;

const TOKEN_LENGTH = 32;
const RECHECK_EVERY_MS = 24 * 3_600_000;
const RECHECK_BATCH = 50;

export type DomainStatus = Domain['status'];

export function domainStatus(row: Pick<DomainRow, 'verified_at' | 'failing_since'>, now: number): DomainStatus {
  if (row.verified_at === null) return 'pending';
  if (row.failing_since === null) return 'active';
  return now - row.failing_since >= STOP_AFTER_FAILING_MS ? 'stopped' : 'failing';
}

export type DomainsService = ReturnType<typeof createDomainsService>;

/** SPEC §19: the domains resource, its verification and daily re-check, and the registry that mirrors it. */
export function createDomainsService(deps: DomainsServiceDeps) {
  const { domains, registry, users, checker, dialect, clock, paginator, defaultHost } = deps;

  const toDomain = (row: DomainRow): Domain => {
    const status = domainStatus(row, clock.now());
    return {
      id: row.id,
      hostname: row.hostname,
      owner_id: row.owner_id,
      verified_at: row.verified_at === null ? null : isoTime(row.verified_at),
      verification: { txt_name: txtNameOf(row.hostname), txt_value: txtValueOf(row.token), http_path: httpPathOf(row.token) },
      scheme: row.scheme === 'http' || row.scheme === 'https' ? row.scheme : null,
      root_redirect: row.root_redirect,
      not_found_redirect: row.not_found_redirect,
      expired_redirect: row.expired_redirect,
      status,
      status_message: row.check_message,
      accepts_links: status !== 'stopped',
      last_checked_at: row.checked_at === null ? null : isoTime(row.checked_at),
      failing_since: row.failing_since === null ? null : isoTime(row.failing_since),
      created_at: isoTime(row.created_at),
      updated_at: isoTime(row.updated_at),
    };
  };

  /** The owner or an admin. */
  async function findManaged(id: number, caller: Caller): Promise<DomainRow> {
    const row = await domains.findById(id);
    if (!row) throw notFound('Domain');
    if (!isAdmin(caller) && row.owner_id !== caller.userId) throw forbidden('Only the owner or an admin may manage this domain');
    if (!keyAllowsDomain(caller, row.id)) throw forbidden('This API key is limited to other domains');
    return row;
  }

  function fallbacks(input: Partial<Pick<DomainCreate, 'root_redirect' | 'not_found_redirect' | 'expired_redirect'>>, hostname: string, details: ErrorDetail[]): DomainChanges {
    const out: DomainChanges = {};
    for (const field of ['root_redirect', 'not_found_redirect', 'expired_redirect'] as const) {
      const value = input[field];
      if (value === undefined) continue;
      if (value === null) {
        out[field] = null;
        continue;
      }
      const problem = checkFallbackUrl(value, hostname);
      if (problem) details.push({ field, message: problem });
      else out[field] = value;
    }
    return out;
  }

  async function activeOwner(caller: Caller, ownerId: number | undefined): Promise<number> {
    if (ownerId !== undefined && ownerId !== caller.userId && !isAdmin(caller)) {
      throw new AppError('FORBIDDEN', 'Only an admin may add a domain for another user', [{ field: 'owner_id', message: "must be the caller's own id, or omitted" }]);
    }
    const me = await users.findById(caller.userId);
    if (!me || me.status !== 'active') throw new AppError('ACCOUNT_NOT_ACTIVE', `Only an active account may add a domain; this one is ${me?.status ?? 'gone'}`);
    const id = ownerId ?? caller.userId;
    if (id !== caller.userId && !(await users.findById(id))) {
      throw validationError([{ field: 'owner_id', message: 'no user has this id' }], 'Request body is invalid');
    }
    return id;
  }

  const reloads = new Map<number, number>();
  const publish = (row: DomainRow): DomainRow => {
    registry.put(toEntry(row));
    return row;
  };

  return {
    toDomain,
    registry,

    async create(input: DomainCreate, caller: Caller): Promise<DomainRow> {
      const ownerId = await activeOwner(caller, input.owner_id);
      const details: ErrorDetail[] = [];
      const hostname = normalizeHostname(input.hostname);
      if (hostname === null) details.push({ field: 'hostname', message: 'must be a host name of at least two labels (letters, digits, hyphens), without port or path' });
      else if (hostname === defaultHost) details.push({ field: 'hostname', message: 'is the default domain of this service' });
      const changes = fallbacks(input, hostname ?? '', details);
      if (details.length || hostname === null) throw validationError(details, 'Request body is invalid');
      const now = clock.now();
      try {
        return publish(await domains.insert({
          hostname, owner_id: ownerId, token: randomAlphanumeric(TOKEN_LENGTH), verified_at: null, scheme: input.scheme ?? null,
          root_redirect: null, not_found_redirect: null, expired_redirect: null, ...changes,
          checked_at: null, failing_since: null, check_message: null, created_at: now, updated_at: now,
        }));
      } catch (err) {
        if (!dialect.isUniqueViolation(err)) throw err;
        throw new AppError('CONFLICT', 'This host name is taken', [{ field: 'hostname', message: 'is already a domain of this service' }]);
      }
    },

    get: findManaged,

    async list(caller: Caller, query: DomainListQueryT, requestUrl: string, cursorOnly: boolean): Promise<PageResult<Domain>> {
      const ownerId = isAdmin(caller) ? query.owner_id ?? null : caller.userId;
      const only = caller.apiKey?.domains ?? null;
      const list = paginator.resolve(query, DOMAIN_SORT_COLUMNS, { owner: ownerId, only }, cursorOnly);
      const { rows, total } = await domains.list(ownerId, list, only);
      return paginator.page(rows, list, total, requestUrl, toDomain, (r) => r[list.sortColumn as 'id' | 'created_at']);
    },

    async patch(id: number, input: DomainPatch, caller: Caller, ifMatch: string | undefined): Promise<DomainRow> {
      const row = await findManaged(id, caller);
      assertIfMatch(ifMatch, domainEtag(row));
      const details: ErrorDetail[] = [];
      if (input.hostname !== undefined && normalizeHostname(input.hostname) !== row.hostname) {
        details.push({ field: 'hostname', message: 'cannot change: add the new name as a domain of its own' });
      }
      if (input.owner_id !== undefined && input.owner_id !== row.owner_id) {
        if (!isAdmin(caller)) throw new AppError('FORBIDDEN', 'Only an admin may hand a domain to another user', [{ field: 'owner_id', message: 'cannot change' }]);
        if (!(await users.findById(input.owner_id))) details.push({ field: 'owner_id', message: 'no user has this id' });
      }
      const changes = fallbacks(input, row.hostname, details);
      if (details.length) throw validationError(details, 'Request body is invalid');
      if (input.scheme !== undefined) changes.scheme = input.scheme;
      if (input.owner_id !== undefined) changes.owner_id = input.owner_id;
      if (Object.keys(changes).length === 0) return row;
      const updated = await domains.update(id, { ...changes, updated_at: clock.now() }, ifMatch === undefined ? null : row.version);
      if (updated) return publish(updated);
      const now = await findManaged(id, caller);
      throw new AppError('PRECONDITION_FAILED', 'If-Match does not match the current representation', [{ field: 'If-Match', message: `the current ETag is ${domainEtag(now)}` }]);
    },

    async remove(id: number, caller: Caller, force: boolean): Promise<void> {
      const row = await findManaged(id, caller);
      if (force && !isAdmin(caller)) throw forbidden('Only an admin may delete a domain with its links');
      if (!force && (await domains.countLinks(id)) > 0) {
        throw new AppError('CONFLICT', 'This domain still has links: delete them first (or an admin may use ?force=true)');
      }
      const removed = await domains.remove(row.id, force);
      registry.remove(row.id);
      if (!removed) throw notFound('Domain');
    },

    /** Checks the TXT record, then the HTTP path; either proves control. */
    async verify(id: number, caller: Caller): Promise<DomainRow> {
      const row = await findManaged(id, caller);
      const txt = await checker.txt(row.hostname, row.token);
      const web = txt.ok ? null : await checker.http(row.hostname, row.token);
      const now = clock.now();
      if (!txt.ok && !web?.ok) {
        throw new AppError('DOMAIN_NOT_VERIFIED', `Neither proof was found: ${txt.found}; ${web!.found}`, [
          { field: 'dns', message: txt.found },
          { field: 'http', message: web!.found },
        ]);
      }
      const updated = await domains.update(id, { verified_at: row.verified_at ?? now, checked_at: now, failing_since: null, check_message: null, updated_at: now }, null);
      if (!updated) throw notFound('Domain');
      return publish(updated);
    },

    /** The daily re-check of verified domains (a job): a failing one records why, and since when. */
    async recheckDue(): Promise<number> {
      const now = clock.now();
      let checked = 0;
      for (const row of await domains.dueForCheck(now - RECHECK_EVERY_MS, RECHECK_BATCH)) {
        if (!(await domains.claimCheck(row.id, row.checked_at, now))) continue; // another instance has it
        checked += 1;
        const txt = await checker.txt(row.hostname, row.token);
        const web = txt.ok ? null : await checker.http(row.hostname, row.token);
        const passed = txt.ok || web!.ok;
        const changes: DomainChanges = passed
          ? { failing_since: null, check_message: null }
          : { failing_since: row.failing_since ?? now, check_message: `${txt.found}; ${web!.found}`.slice(0, 512) };
        const updated = await domains.update(row.id, changes, null);
        if (updated) publish(updated);
      }
      return checked;
    },

    /** The verification token's answer, for the host that names it (GET /.well-known/ferry-verification/{token}). */
    async tokenFor(hostname: string, token: string): Promise<string | null> {
      const row = await domains.findByToken(token);
      return row && row.hostname === hostname ? row.token : null;
    },

    /** Loads every domain into the registry (start-up, and after the change feed was cut off). */
    async reloadAll(): Promise<void> {
      registry.replaceAll((await domains.all()).map(toEntry));
    },

    /** A domain another instance added a moment ago, before its change message arrived here. */
    async reloadHostname(hostname: string): Promise<void> {
      const row = await domains.findByHostname(hostname);
      if (row) registry.put(toEntry(row));
    },

    /** Follows a change another instance made. */
    async reload(id: number): Promise<void> {
      // Two changes of one domain heard in a row: only the reload started last may write.
      const turn = (reloads.get(id) ?? 0) + 1;
      reloads.set(id, turn);
      const row = await domains.findById(id);
      if (reloads.get(id) !== turn) return;
      reloads.delete(id);
      if (row) registry.put(toEntry(row));
      else registry.remove(id);
    },
  };
}
