import { auditActorOf } from '../../db/audit-log.js';
import type { Dialect } from '../../db/dialect.js';
import type { DomainRow } from '../../db/types.js';
import { AppError, forbidden, notFound, validationError, type ErrorDetail } from '../../lib/app-error.js';
import { isAdmin, type Caller } from '../../lib/caller.js';
import type { Clock } from '../../lib/clock.js';
import { assertIfMatch } from '../../lib/etag.js';
import type { UsersRepository } from '../users/index.js';
import { findManagedDomain } from './domain-access.js';
import { alreadyClaimed, hostnameTaken, newClaimRow } from './domain-claims.js';
import { domainEtag } from './domain-record.js';
import { toEntry, type DomainRegistry } from './domain-registry.js';
import type { DomainChanges, DomainsRepository } from './domains.repository.js';
import type { DomainCreate, DomainPatch } from './domains.schemas.js';
import { assertFallbacksAllowed, checkFallbackUrl, FALLBACK_FIELDS, type FallbackField } from './fallback-url.js';
import type { HostBlocklist } from '../../lib/host-blocklist.js';
import { normalizeHostname } from './hostname.js';
import { APP_LINK_DOCUMENTS, appLinkText, type AppLinkDocument } from '../../lib/app-links.js';

export interface DomainWritesDeps {
  domains: Pick<DomainsRepository, 'findById' | 'claimsOf' | 'insert' | 'update' | 'countLinks' | 'remove'>;
  registry: Pick<DomainRegistry, 'put' | 'remove'>;
  users: Pick<UsersRepository, 'findById'>;
  dialect: Pick<Dialect, 'isUniqueViolation'>;
  clock: Clock;
  /** the default domain's host (PUBLIC_BASE_URL's): never a domain of its own */
  defaultHost: string;
  /** BLOCKED_HOSTS_FILE's list: no fallback may send visits there (SPEC §25) */
  blockedHosts?: HostBlocklist;
}

/** The fallbacks that were sent: null clears one, a URL must pass checkFallbackUrl (else a detail, not a change). */
function fallbackChanges(
  input: Partial<Pick<DomainCreate, FallbackField>>,
  hostname: string,
  details: ErrorDetail[],
): DomainChanges {
  const out: DomainChanges = {};
  for (const field of FALLBACK_FIELDS) {
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

/** SPEC §21: the app-links documents that were sent, as stored text (null clears one); too large: a detail. */
function appLinkChanges(input: Partial<Pick<DomainCreate, AppLinkDocument>>, details: ErrorDetail[]): DomainChanges {
  const out: DomainChanges = {};
  for (const field of Object.keys(APP_LINK_DOCUMENTS) as AppLinkDocument[]) {
    const text = appLinkText(input[field], field, details);
    if (text !== undefined) out[field] = text;
  }
  return out;
}

/** The new domain's host name, normalized; what makes it unfit goes into `details`. */
function newHostname(input: string, defaultHost: string, details: ErrorDetail[]): string | null {
  const hostname = normalizeHostname(input);
  if (hostname === null)
    details.push({
      field: 'hostname',
      message: 'must be a host name of at least two labels (letters, digits, hyphens), without port or path',
    });
  else if (hostname === defaultHost)
    details.push({ field: 'hostname', message: 'is the default domain of this service' });
  return hostname;
}

/** The new domain's owner: the caller, or (for an admin) the user named, and only from an active account. */
async function activeOwner(
  users: Pick<UsersRepository, 'findById'>,
  caller: Caller,
  ownerId: number | undefined,
): Promise<number> {
  if (ownerId !== undefined && ownerId !== caller.userId && !isAdmin(caller)) {
    throw new AppError('FORBIDDEN', 'Only an admin may add a domain for another user', [
      { field: 'owner_id', message: "must be the caller's own id, or omitted" },
    ]);
  }
  const me = await users.findById(caller.userId);
  if (!me || me.status !== 'active')
    throw new AppError(
      'ACCOUNT_NOT_ACTIVE',
      `Only an active account may add a domain; this one is ${me?.status ?? 'gone'}`,
    );
  const id = ownerId ?? caller.userId;
  if (id !== caller.userId && !(await users.findById(id))) {
    throw validationError([{ field: 'owner_id', message: 'no user has this id' }], 'Request body is invalid');
  }
  return id;
}

/** What a patch changes of `row`; the host name never changes, the owner only by an admin's hand. */
async function patchChanges(
  users: Pick<UsersRepository, 'findById'>,
  row: DomainRow,
  input: DomainPatch,
  caller: Caller,
): Promise<DomainChanges> {
  const details: ErrorDetail[] = [];
  if (input.hostname !== undefined && normalizeHostname(input.hostname) !== row.hostname) {
    details.push({ field: 'hostname', message: 'cannot change: add the new name as a domain of its own' });
  }
  if (input.owner_id !== undefined && input.owner_id !== row.owner_id) {
    if (!isAdmin(caller))
      throw new AppError('FORBIDDEN', 'Only an admin may hand a domain to another user', [
        { field: 'owner_id', message: 'cannot change' },
      ]);
    if (!(await users.findById(input.owner_id))) details.push({ field: 'owner_id', message: 'no user has this id' });
  }
  const changes = { ...fallbackChanges(input, row.hostname, details), ...appLinkChanges(input, details) };
  if (details.length) throw validationError(details, 'Request body is invalid');
  if (input.scheme !== undefined) changes.scheme = input.scheme;
  if (input.click_retention_days !== undefined) changes.click_retention_days = input.click_retention_days;
  if (input.owner_id !== undefined) changes.owner_id = input.owner_id;
  return changes;
}

/** Deletes a domain (with its links only when `force`, an admin's), and forgets it in this instance's registry. */
async function removeDomain(
  deps: Pick<DomainWritesDeps, 'domains' | 'registry' | 'clock'>,
  id: number,
  caller: Caller,
  force: boolean,
): Promise<void> {
  const { domains, registry, clock } = deps;
  const row = await findManagedDomain(domains, id, caller);
  if (force && !isAdmin(caller)) throw forbidden('Only an admin may delete a domain with its links');
  if (!force && (await domains.countLinks(id)) > 0) {
    throw new AppError('CONFLICT', 'This domain still has links: delete them first (or an admin may use ?force=true)');
  }
  const removed = await domains.remove(row.id, force, clock.now(), {
    action: 'domain.removed',
    actor: auditActorOf(caller),
    target: { type: 'domain', id: row.id },
    details: { hostname: row.hostname, with_links: force },
    at: clock.now(),
  });
  registry.remove(row.id);
  if (!removed) throw notFound('Domain');
}

/** Adding, changing and deleting a domain; each change is mirrored in this instance's registry at once. */
export function createDomainWrites(deps: DomainWritesDeps) {
  const { domains, registry, users, dialect, clock, defaultHost } = deps;
  const publish = (row: DomainRow): DomainRow => {
    registry.put(toEntry(row));
    return row;
  };

  return {
    /**
     * A claim of a host name (SPEC §25): several users may claim a name until one verifies it; a verified
     * name, or a second claim of the same owner, is 409.
     */
    async create(input: DomainCreate, caller: Caller): Promise<DomainRow> {
      if (caller.apiKey?.domains) throw forbidden('An API key limited to domains cannot add domains');
      const ownerId = await activeOwner(users, caller, input.owner_id);
      const details: ErrorDetail[] = [];
      const hostname = newHostname(input.hostname, defaultHost, details);
      const changes = fallbackChanges(input, hostname ?? '', details);
      const appLinks = appLinkChanges(input, details);
      if (details.length || hostname === null) throw validationError(details, 'Request body is invalid');
      assertFallbacksAllowed(changes, deps.blockedHosts);
      const claims = await domains.claimsOf(hostname);
      if (claims.some((c) => c.verified_at !== null)) throw hostnameTaken();
      if (claims.some((c) => c.owner_id === ownerId)) throw alreadyClaimed();
      try {
        return publish(
          await domains.insert(
            {
              ...newClaimRow(hostname, ownerId, clock.now()),
              scheme: input.scheme ?? null,
              click_retention_days: input.click_retention_days ?? null,
              ...changes,
              ...appLinks,
            },
            { action: 'domain.added', actor: auditActorOf(caller), details: { hostname }, at: clock.now() },
          ),
        );
      } catch (err) {
        if (!dialect.isUniqueViolation(err)) throw err;
        throw alreadyClaimed(); // the same owner's two requests at once
      }
    },

    async patch(id: number, input: DomainPatch, caller: Caller, ifMatch: string | undefined): Promise<DomainRow> {
      const row = await findManagedDomain(domains, id, caller);
      assertIfMatch(ifMatch, domainEtag(row));
      const changes = await patchChanges(users, row, input, caller);
      assertFallbacksAllowed(changes, deps.blockedHosts);
      if (Object.keys(changes).length === 0) return row;
      const expected = ifMatch === undefined ? null : row.version;
      const updated = await domains
        .update(id, { ...changes, updated_at: clock.now() }, expected)
        .catch((err: unknown) => {
          if (!dialect.isUniqueViolation(err)) throw err; // the new owner holds a claim of this name already
          const detail = { field: 'owner_id', message: 'holds a claim of this host name' };
          throw new AppError('CONFLICT', 'That user has claimed this host name already', [detail]);
        });
      if (updated) return publish(updated);
      const now = await findManagedDomain(domains, id, caller);
      throw new AppError('PRECONDITION_FAILED', 'If-Match does not match the current representation', [
        { field: 'If-Match', message: `the current ETag is ${domainEtag(now)}` },
      ]);
    },

    remove: (id: number, caller: Caller, force: boolean): Promise<void> => removeDomain(deps, id, caller, force),
  };
}
