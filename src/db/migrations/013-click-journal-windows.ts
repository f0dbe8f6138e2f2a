import type { Kysely } from 'kysely';
import type { Dialect } from '../dialect.js';

/**
 * A window of the click journal written in several transactions (modules/clicks/rollups/sqlite-click-thread.ts): the
 * embedded writer sorts a window of clicks by link and commits it link range by link range, so the mark
 * also says how far into the window it got. Positions in [committed, window_end) are committed when their
 * link is below window_link, or it is window_link and they are among its first window_count clicks of the
 * window (in journal order). Null: no window is partly written.
 */
export async function up(db: Kysely<unknown>, d: Dialect): Promise<void> {
  for (const column of ['window_end', 'window_link', 'window_count']) {
    await db.schema.alterTable('click_journal_marks').addColumn(column, d.bigint).execute();
  }
}
