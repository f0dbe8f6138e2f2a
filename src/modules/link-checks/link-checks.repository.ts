import type { Kysely } from 'kysely';
import type { Dialect } from '../../db/dialect.js';
import { recordPublicEvents } from '../../db/events.js';
import { recordEvent, type LinkField } from '../../db/outbox.js';
import type { Database, LinkRow } from '../../db/types.js';
import type { CheckOutcome, Health } from './link-health.js';

/** A link due for a check, with what deciding its check needs. */
export type DueLink = Pick<
  LinkRow,
  | 'id'
  | 'domain_id'
  | 'short_code'
  | 'aliases'
  | 'original_url'
  | 'disabled_at'
  | 'expires_at'
  | 'health_status'
  | 'health_failures'
  | 'health_since'
  | 'health_checked_at'
  | 'health_http_status'
  | 'health_error'
  | 'next_check_at'
>;

/** Where a walk over the due links stands: past this (next_check_at, id). */
export interface DueKey {
  at: number;
  id: number;
}

const DUE_COLUMNS = [
  'id',
  'domain_id',
  'short_code',
  'aliases',
  'original_url',
  'disabled_at',
  'expires_at',
  'health_status',
  'health_failures',
  'health_since',
  'health_checked_at',
  'health_http_status',
  'health_error',
  'next_check_at',
] as const;

/** The columns a change of health touches, as the outbox names them. */
const HEALTH_FIELDS: LinkField[] = [
  'health_status',
  'health_failures',
  'health_since',
  'health_error',
  'health_http_status',
  'health_checked_at',
];

/** A link's names on its domain: its code and its aliases (the keys a visit looks it up by). */
export const namesOfLink = (row: Pick<LinkRow, 'short_code' | 'aliases'>): string[] => [
  row.short_code,
  ...(row.aliases === '' ? [] : row.aliases.split(',')),
];

type RepositoryDeps = Parameters<typeof createLinkChecksRepository>[0];

/**
 * A change of status, in the change's transaction: the public `link.health_changed` (the link as v1 shows it, and
 * its health before as `previous_health`), and the outbox's `link.updated` for every instance's link cache.
 */
function healthAnnouncer({ dialect, changeOrigin, toLink }: Omit<RepositoryDeps, 'db'>) {
  const iso = (ms: number | null) => (ms === null ? null : new Date(Number(ms)).toISOString());
  return async (tx: Kysely<Database>, r: CheckResult, row: LinkRow): Promise<void> => {
    const previous = {
      status: r.link.health_status,
      checked_at: iso(r.link.health_checked_at),
      http_status: r.link.health_http_status === null ? null : Number(r.link.health_http_status),
      error: r.link.health_error,
      since: iso(r.link.health_since),
    };
    const event = {
      type: 'link.health_changed' as const,
      data: { ...toLink(row), previous_health: previous },
      userId: row.user_id,
      domainId: row.domain_id === 0 ? null : row.domain_id,
      linkId: row.id,
    };
    await recordPublicEvents(tx, dialect, [event], { at: r.checkedAt });
    const names = namesOfLink(row);
    const before = { domain_id: row.domain_id, names };
    const data = { link_id: row.id, domain_id: row.domain_id, names, changed: HEALTH_FIELDS, before };
    await recordEvent(tx, dialect, { type: 'link.updated', data }, { origin: changeOrigin, at: r.checkedAt });
  };
}

export interface CheckResult {
  link: DueLink;
  outcome: CheckOutcome;
  health: Health;
  checkedAt: number;
  nextCheckAt: number;
}

/**
 * Due links (next_check_at <= now) in order, after `after`: first the rest of `after`'s instant (by id), then
 * the later instants. Two index ranges: the one keyset condition `at > a or (at = a and id > b)` made SQLite
 * walk every link of instant `a` from its start at each page — 35 ms on the event loop with 100,000 links
 * all due at 0 (every link is, when checks are first turned on).
 */
async function dueLinks(db: Kysely<Database>, now: number, after: DueKey | null, limit: number): Promise<DueLink[]> {
  const base = db.selectFrom('links').select(DUE_COLUMNS);
  if (after === null)
    return base.where('next_check_at', '<=', now).orderBy('next_check_at').orderBy('id').limit(limit).execute();
  const rest =
    after.at <= now
      ? await base.where('next_check_at', '=', after.at).where('id', '>', after.id).orderBy('id').limit(limit).execute()
      : [];
  if (rest.length === limit) return rest;
  const later = await base
    .where('next_check_at', '>', after.at)
    .where('next_check_at', '<=', now)
    .orderBy('next_check_at')
    .orderBy('id')
    .limit(limit - rest.length)
    .execute();
  return [...rest, ...later];
}

/**
 * The checks' reads and writes of links (SPEC §24): the due links in order (links_next_check_idx), a link put off,
 * and a check's result — with, when the status changed, the `link.health_changed` event (db/events.ts) and the
 * outbox's `link.updated` (every instance's link cache forgets the link: broken or not decides where visits go),
 * in the same transaction.
 */
export function createLinkChecksRepository(deps: {
  db: Kysely<Database>;
  dialect: Pick<Dialect, 'notify'>;
  /** this instance's name in the outbox (it drops the names from its own cache itself) */
  changeOrigin: string;
  /** the link as the v1 API shows it (the event's data) */
  toLink: (row: LinkRow) => object;
}) {
  const { db } = deps;
  const announce = healthAnnouncer(deps);
  return {
    due: (now: number, after: DueKey | null, limit: number): Promise<DueLink[]> => dueLinks(db, now, after, limit),

    /** A link not checked now (disabled, expired) is due again at `at`. */
    async postpone(id: number, at: number): Promise<void> {
      await db.updateTable('links').set({ next_check_at: at }).where('id', '=', id).execute();
    },

    /**
     * Writes checks' results in one transaction (a commit per check would bound the rate on the embedded engine),
     * each unless the link's destination changed meanwhile (its reset and new check win). The rows whose status
     * changed, after the commit.
     */
    async record(results: readonly CheckResult[]): Promise<LinkRow[]> {
      if (results.length === 0) return [];
      return db.transaction().execute(async (tx) => {
        const changed: LinkRow[] = [];
        for (const r of results) {
          const row = await tx
            .updateTable('links')
            .set({
              health_status: r.health.status,
              health_failures: r.health.failures,
              health_since: r.health.since,
              health_checked_at: r.checkedAt,
              health_http_status: r.outcome.httpStatus,
              health_error: r.outcome.error,
              next_check_at: r.nextCheckAt,
            })
            .where('id', '=', r.link.id)
            .where('original_url', '=', r.link.original_url)
            .returningAll()
            .executeTakeFirst();
          if (row && r.health.status !== r.link.health_status) {
            await announce(tx, r, row);
            changed.push(row);
          }
        }
        return changed;
      });
    },
  };
}

export type LinkChecksRepository = ReturnType<typeof createLinkChecksRepository>;
