import { sql, type Kysely } from 'kysely';
import type { Dialect } from '../dialect.js';
import type { Database } from '../types.js';

/** As lib/instant.ts (migrations import nothing from the layers above the database). */
const EARLIEST = 0;
const LATEST = Date.parse('9999-12-31T23:59:59.999Z');
const TITLE_BATCH = 5_000;

/**
 * Values that imports of earlier versions stored as the source had them, and that made every later read of
 * their link or owner answer 500 (SPEC §25: no stored value may break a read). Imports now refuse them; this
 * repairs what is already stored, once, on both engines:
 *
 * - a title with control characters (a line break, a tab): they become spaces, as an import now makes them;
 * - a link's expiry after 9999: none (it never expires, as the source meant); before 1970: 1970 (it has expired);
 * - a link's creation outside 1970–9999: its last update (the import's time);
 * - visits dated outside 1970–9999: their click records and rollup rows are removed (a statistics window can
 *   never reach them), and the link's first and last click come from the hours that are left.
 */
export async function up(untyped: Kysely<unknown>, _d: Dialect): Promise<void> {
  const db = untyped as Kysely<Database>;
  await repairTitles(db);
  await db.updateTable('links').set({ expires_at: null }).where('expires_at', '>', LATEST).execute();
  await db.updateTable('links').set({ expires_at: EARLIEST }).where('expires_at', '<', EARLIEST).execute();
  await db
    .updateTable('links')
    .set((eb) => ({ created_at: eb.ref('updated_at') }))
    .where((eb) => eb.or([eb('created_at', '<', EARLIEST), eb('created_at', '>', LATEST)]))
    .execute();
  await repairVisitTimes(db);
}

async function repairTitles(db: Kysely<Database>): Promise<void> {
  for (let after = 0; ;) {
    const rows = await db
      .selectFrom('links')
      .select(['id', 'title'])
      .where('id', '>', after)
      .where('title', 'is not', null)
      .orderBy('id')
      .limit(TITLE_BATCH)
      .execute();
    for (const row of rows) {
      const fixed = row.title!.replace(/\p{Cc}/gu, ' ').trim();
      if (fixed !== row.title)
        await db
          .updateTable('links')
          .set({ title: fixed === '' ? null : fixed })
          .where('id', '=', row.id)
          .execute();
    }
    if (rows.length < TITLE_BATCH) return;
    after = Number(rows[rows.length - 1]!.id);
  }
}

async function repairVisitTimes(db: Kysely<Database>): Promise<void> {
  const outside = (column: string) =>
    sql<boolean>`(${sql.ref(column)} < ${EARLIEST} or ${sql.ref(column)} > ${LATEST})`;
  const broken = await db
    .selectFrom('links')
    .select('id')
    .where((eb) => eb.or([outside('first_click_at'), outside('last_click_at')]).$castTo<boolean>())
    .execute();
  await db.deleteFrom('clicks').where(outside('clicked_at')).execute();
  for (const table of ['link_click_hourly', 'user_click_hourly'] as const)
    await db.deleteFrom(table).where(outside('hour_start')).execute();
  for (const table of ['link_click_daily_values', 'user_click_daily_values'] as const)
    await db.deleteFrom(table).where(outside('day_start')).execute();
  for (const { id } of broken) {
    const span = await db
      .selectFrom('link_click_hourly')
      .select([sql<number | null>`min(hour_start)`.as('first'), sql<number | null>`max(hour_start)`.as('last')])
      .where('link_id', '=', id)
      .executeTakeFirst();
    const first = span?.first == null ? null : Number(span.first);
    const last = span?.last == null ? null : Number(span.last) + 3_599_999;
    await db.updateTable('links').set({ first_click_at: first, last_click_at: last }).where('id', '=', id).execute();
  }
}
