import type { AuditActor } from '../../db/audit-log.js';
import type { LinkRow } from '../../db/types.js';
import { AppError, validationError, type ErrorDetail } from '../../lib/app-error.js';
import { isAdmin, type Caller } from '../../lib/caller.js';
import type { Clock } from '../../lib/clock.js';
import type { PageResult, Paginator } from '../../lib/pagination.js';
import type { HostBlocklist } from '../../lib/host-blocklist.js';
import { namesOf, type LinkChanges, type LinksRepository } from './links.repository.js';
import type { ScannedLink } from './link-queries.repository.js';
import type { VisitCache } from './visit-cache.js';
import { LINK_SORT_COLUMNS, NULL_IS_LAST, type AllLinksQueryT, type Link, type LinkPatch } from './links.schemas.js';
import type { LinkDomains } from './link-domains.js';
import { isExpired } from './link-reads.js';
import { hostOf } from './original-url.js';

/** What `ferry links disable-blocked` writes as the reason. */
export const BLOCKED_HOST_REASON = 'Its destination is on the blocked hosts list';
const SCAN_BATCH = 1000;

type Moderation = Pick<LinkPatch, 'disabled' | 'disabled_reason'>;

/**
 * The moderation fields of a PATCH (SPEC §18). Only an admin changes them; anyone else may echo the current
 * values back (as users echo their role and status) and gets 403 for any other. `disabled: true` keeps the
 * time a link was first disabled; `false` clears the reason with it; a reason alone needs a disabled link.
 */
export function moderationChanges(
  current: Pick<LinkRow, 'disabled_at' | 'disabled_reason'>,
  input: Moderation,
  caller: Caller | null,
  now: number,
): LinkChanges {
  const disabled = current.disabled_at !== null;
  const wantsDisabled = input.disabled ?? disabled;
  const reason = input.disabled_reason === undefined ? current.disabled_reason : input.disabled_reason;
  if (wantsDisabled === disabled && reason === current.disabled_reason) return {};
  if (!isAdmin(caller)) {
    const details: ErrorDetail[] = [];
    if (wantsDisabled !== disabled) details.push({ field: 'disabled', message: 'only an admin may change it' });
    if (reason !== current.disabled_reason)
      details.push({ field: 'disabled_reason', message: 'only an admin may change it' });
    throw new AppError('FORBIDDEN', 'Only an admin may disable a link or enable it again', details);
  }
  if (!wantsDisabled) {
    if (input.disabled_reason != null)
      throw validationError(
        [{ field: 'disabled_reason', message: 'can only be given with disabled: true' }],
        'Request body is invalid',
      );
    return { disabled_at: null, disabled_reason: null };
  }
  return { disabled_at: current.disabled_at ?? now, disabled_reason: reason };
}

export interface LinkModerationDeps {
  links: Pick<LinksRepository, 'findByCode' | 'update' | 'scan' | 'listAll'>;
  /** this process's redirect cache; null where no redirect is served (the CLI) */
  cache: VisitCache | null;
  blockedHosts: HostBlocklist;
  clock: Clock;
  paginator: Paginator;
  toLink: (row: LinkRow) => Link;
  /** the domains links live on: the domain a code is named on, the admin list's `domain` filter, each row's name */
  domains: Pick<LinkDomains, 'idOf' | 'listFilter' | 'ensureKnown'>;
}

/** What `ferry links disable-blocked` did to links: disabled, and fallback_urls cleared (SPEC §18, §24). */
export interface BlockedLinksOutcome {
  disabled: number;
  fallbacksCleared: number;
}

/** How often a link changed by someone else meanwhile is read again before it is left as it is. */
const ATTEMPTS = 3;

/** Whether the URL's host is blocked now (a stored URL that no longer parses sends no visit anywhere). */
function onBlockedHost(url: string, blockedHosts: HostBlocklist): boolean {
  try {
    return blockedHosts.isBlocked(hostOf(new URL(url)));
  } catch {
    return false;
  }
}

/**
 * What takes a link off blocked hosts: disabled (with `reason`) when its destination is on one, and its
 * fallback_url cleared when that is (SPEC §24: a broken link's visits would go there; with it cleared they go
 * to the domain's broken_redirect or the destination, which the same run judged). The same rule refuses both
 * fields on creation and change (link-input.ts).
 */
function blockedLinkChanges(row: ScannedLink, blockedHosts: HostBlocklist, reason: string, now: number): LinkChanges {
  const changes: LinkChanges = {};
  if (row.disabled_at === null && onBlockedHost(row.original_url, blockedHosts))
    Object.assign(changes, { disabled_at: now, disabled_reason: reason });
  if (row.fallback_url !== null && onBlockedHost(row.fallback_url, blockedHosts)) changes.fallback_url = null;
  return changes;
}

/**
 * Disables every link whose target's host is blocked now and was not disabled yet, and clears every fallback_url
 * on a blocked host. Each change is conditional on the version judged: a link changed meanwhile (its owner
 * pointing the fallback elsewhere) is read and judged again, so a change made since is never overwritten.
 */
async function disableBlockedLinks(
  deps: Pick<LinkModerationDeps, 'links' | 'cache' | 'blockedHosts' | 'clock'>,
  reason: string,
  actor: AuditActor,
): Promise<BlockedLinksOutcome> {
  const { links, cache, blockedHosts, clock } = deps;
  const outcome: BlockedLinksOutcome = { disabled: 0, fallbacksCleared: 0 };
  const takeOffBlockedHosts = async (first: ScannedLink): Promise<void> => {
    let row: ScannedLink | undefined = first;
    for (let attempt = 0; row !== undefined && attempt < ATTEMPTS; attempt += 1) {
      const now = clock.now();
      const changes = blockedLinkChanges(row, blockedHosts, reason, now);
      if (Object.keys(changes).length === 0) return;
      const updated = await links.update(row, changes, row.version, now, actor);
      cache?.forgetNames(row.domain_id, namesOf(row));
      if (updated) {
        if (changes.disabled_at !== undefined) outcome.disabled += 1;
        if (changes.fallback_url !== undefined) outcome.fallbacksCleared += 1;
        return;
      }
      row = await links.findByCode(row.short_code, row.domain_id);
    }
  };
  for (let after = 0; ;) {
    const batch = await links.scan(after, SCAN_BATCH);
    for (const row of batch) await takeOffBlockedHosts(row);
    if (batch.length < SCAN_BATCH) return outcome;
    after = batch[batch.length - 1]!.id;
  }
}

export type LinkModeration = ReturnType<typeof createLinkModeration>;

/**
 * What an admin does to other people's links (SPEC §18), as plain service calls: the API's admin list, and
 * the CLI's `links list|disable|disable-blocked`. Every change goes through the repository's update, which
 * announces it to the other instances' redirect caches (infra/outbox-feed.ts); this process's cache
 * forgets the code at once.
 */
export function createLinkModeration(deps: LinkModerationDeps) {
  const { links, cache, clock, paginator, toLink, domains } = deps;

  /**
   * A code names a link only on its domain (SPEC §19): `domain` is its host name, absent (or the default
   * domain's host) for the default domain. Each failure says which name was not found where.
   */
  async function setDisabled(
    code: string,
    domain: string | undefined,
    changes: (row: LinkRow) => LinkChanges,
    actor?: AuditActor,
  ): Promise<LinkRow> {
    const domainId = await domains.idOf(domain);
    if (domainId === null) throw new AppError('NOT_FOUND', `${domain} is not a domain of this service`);
    const missing = () =>
      new AppError('NOT_FOUND', `No link has the code ${code} on ${domainId === 0 ? 'the default domain' : domain}`);
    const row = await links.findByCode(code, domainId);
    if (!row || isExpired(row, clock.now())) throw missing();
    const updated = await links.update(row, changes(row), null, clock.now(), actor);
    cache?.forgetNames(row.domain_id, namesOf(row));
    if (!updated) throw missing();
    return updated;
  }

  return {
    /** Disables the link `code` on `domain` (a disabled one keeps its first time and takes the new reason). */
    disable: (code: string, reason: string | null, domain: string | undefined, actor: AuditActor): Promise<LinkRow> =>
      setDisabled(
        code,
        domain,
        (row) => ({ disabled_at: row.disabled_at ?? clock.now(), disabled_reason: reason }),
        actor,
      ),

    /** Lets the link `code` on `domain` redirect again. */
    enable: (code: string, domain?: string): Promise<LinkRow> =>
      setDisabled(code, domain, () => ({ disabled_at: null, disabled_reason: null })),

    /** Disables every link to a blocked host not disabled yet, clears every fallback_url on one; how many of each. */
    disableBlocked: (actor: AuditActor, reason: string = BLOCKED_HOST_REASON): Promise<BlockedLinksOutcome> =>
      disableBlockedLinks(deps, reason, actor),

    /**
     * Every link, for admins (SPEC §18): the user's list's sort and filters, plus owner and state. `keyDomains`:
     * the domains of the caller's API key when it is limited to some (SPEC §19: only their links are listed).
     */
    async listAll(
      query: AllLinksQueryT,
      requestUrl: string,
      cursorOnly = false,
      keyDomains: readonly number[] | null = null,
    ): Promise<PageResult<Link>> {
      // An unverified name names the listed user's claim, else the oldest (domain-claims.ts).
      const byDomain = await domains.listFilter(query.domain, keyDomains, {
        userId: query.user_id ?? null,
        admin: true,
      });
      const filter = {
        tag: query.tag?.toLowerCase(),
        q: query.q,
        health: query.health,
        userId: query.user_id,
        status: query.status,
        ...byDomain,
      };
      const list = paginator.resolve(query, LINK_SORT_COLUMNS, { all: true, ...filter }, cursorOnly, NULL_IS_LAST);
      const { rows, total } = await links.listAll(clock.now(), list, filter);
      await domains.ensureKnown(rows);
      const sortValue = (r: LinkRow): number => (r[list.sortColumn as keyof LinkRow] as number | null) ?? list.nullsAs!;
      return paginator.page(rows, list, total, requestUrl, toLink, sortValue);
    },
  };
}
