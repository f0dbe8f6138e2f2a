/** A user's lifetime figures and the account-wide reads beside the statistics' windows (stats.repository.ts). */
import { sql, type Kysely } from 'kysely';
import type { Database } from '../../../db/types.js';

export interface UserTotals {
  links: number;
  clicks: number;
  bots: number;
  uniqueVisitors: number;
  firstAt: number | null;
  lastAt: number | null;
}

/**
 * A user's lifetime figures: their links' counters summed per domain by the database as the links change
 * (link_owner_totals, db/owner-totals.ts: a row per domain, whatever the number of links), plus the clicks of
 * their links that are gone (kept on the user's row when a link is deleted or swept), as the per-user rollups of
 * the window keep them. Visitors are each link's, added up; the first and last click cover deleted links too.
 */
async function readUserTotals(db: Kysely<Database>, userId: number, domains?: readonly number[]): Promise<UserTotals> {
  const [r, gone] = await Promise.all([
    db
      .selectFrom('link_owner_totals')
      .select([
        sql<number>`coalesce(sum(links), 0)`.as('links'),
        sql<number>`coalesce(sum(clicks), 0)`.as('clicks'),
        sql<number>`coalesce(sum(bots), 0)`.as('bots'),
        sql<number>`coalesce(sum(unique_visitors), 0)`.as('unique_visitors'),
        sql<number | null>`min(first_click_at)`.as('first_at'),
        sql<number | null>`max(last_click_at)`.as('last_at'),
      ])
      .where('user_id', '=', userId)
      .$if(domains !== undefined, (q) => q.where('domain_id', 'in', domains!.length ? [...domains!] : [-1]))
      .executeTakeFirstOrThrow(),
    // Deleted links' clicks are kept per user, not per domain: a domain's figures leave them out.
    domains !== undefined
      ? undefined
      : db
          .selectFrom('users')
          .select(['deleted_link_clicks', 'deleted_link_bots'])
          .where('id', '=', userId)
          .executeTakeFirst(),
  ]);
  const n = (v: number | null) => (v === null ? null : Number(v));
  return {
    links: Number(r.links),
    clicks: Number(r.clicks) + Number(gone?.deleted_link_clicks ?? 0),
    bots: Number(r.bots) + Number(gone?.deleted_link_bots ?? 0),
    uniqueVisitors: Number(r.unique_visitors),
    firstAt: n(r.first_at),
    lastAt: n(r.last_at),
  };
}

/** A user's totals, which codes are theirs now, and how fresh the rollups are. */
export function createAccountReads(db: Kysely<Database>) {
  return {
    userTotals: (userId: number, domains?: readonly number[]): Promise<UserTotals> =>
      readUserTotals(db, userId, domains),

    /** Which of these codes are links of the user now (top_links leaves out deleted links). */
    async userCodes(userId: number, codes: readonly string[], domains?: readonly number[]): Promise<Set<string>> {
      if (codes.length === 0) return new Set();
      const rows = await db
        .selectFrom('links')
        .select('short_code')
        .where('user_id', '=', userId)
        .where('short_code', 'in', codes)
        .$if(domains !== undefined, (q) => q.where('domain_id', 'in', domains!.length ? [...domains!] : [-1]))
        .execute();
      return new Set(rows.map((r) => r.short_code));
    },

    /** The latest completed flush of any click writer (`data_fresh_as_of`), null before the first. */
    async freshAsOf(): Promise<number | null> {
      const r = await db
        .selectFrom('click_ingest')
        .select(sql<number | null>`max(fresh_as_of)`.as('at'))
        .executeTakeFirst();
      return r?.at === null || r?.at === undefined ? null : Number(r.at);
    },
  };
}
