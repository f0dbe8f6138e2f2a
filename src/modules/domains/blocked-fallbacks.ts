import type { Kysely } from 'kysely';
import type { Dialect } from '../../db/dialect.js';
import type { Database, DomainRow } from '../../db/types.js';
import type { Clock } from '../../lib/clock.js';
import type { HostBlocklist } from '../../lib/host-blocklist.js';
import type { Paginator } from '../../lib/pagination.js';
import { createDomainsRepository, type DomainChanges, type DomainsRepository } from './domains.repository.js';
import { FALLBACK_FIELDS } from './fallback-url.js';

/** How often a domain changed by someone else meanwhile is read again before it is left as it is. */
const ATTEMPTS = 3;

/** The fallbacks of `row` that send visits to a blocked host, set to null. */
function blockedFallbacks(row: DomainRow, blockedHosts: HostBlocklist): DomainChanges {
  const changes: DomainChanges = {};
  for (const field of FALLBACK_FIELDS) {
    const url = row[field];
    if (url === null) continue;
    let host: string;
    try {
      host = new URL(url).hostname;
    } catch {
      continue;
    }
    if (blockedHosts.isBlocked(host)) changes[field] = null;
  }
  return changes;
}

/** Clears one domain's blocked fallbacks, conditional on the row it judged (a change made meanwhile is judged again). */
async function clearOne(
  domains: Pick<DomainsRepository, 'findById' | 'update'>,
  first: DomainRow,
  blockedHosts: HostBlocklist,
  clock: Clock,
): Promise<number> {
  let row: DomainRow | undefined = first;
  for (let attempt = 0; row !== undefined && attempt < ATTEMPTS; attempt += 1) {
    const changes = blockedFallbacks(row, blockedHosts);
    const cleared = Object.keys(changes).length;
    if (cleared === 0) return 0;
    if (await domains.update(row.id, { ...changes, updated_at: clock.now() }, row.version)) return cleared;
    row = await domains.findById(row.id);
  }
  return 0;
}

/**
 * `ferry links disable-blocked` (SPEC §25): every domain fallback whose host BLOCKED_HOSTS_FILE blocks now is
 * cleared (the visit then gets the 404 or 410 it would have had); how many fallbacks. Each change is announced
 * as the API's are (domains.repository.ts), so running servers follow it.
 */
export async function clearBlockedFallbacks(
  deps: { db: Kysely<Database>; dialect: Dialect; paginator: Paginator; clock: Clock },
  blockedHosts: HostBlocklist,
): Promise<number> {
  const domains = createDomainsRepository(deps.db, deps.dialect, deps.paginator, 'blocked-fallbacks');
  let cleared = 0;
  for (const row of await domains.all()) cleared += await clearOne(domains, row, blockedHosts, deps.clock);
  return cleared;
}
