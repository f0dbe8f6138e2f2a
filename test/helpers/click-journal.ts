import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { TestApp } from './app.js';

/**
 * What an earlier process left behind, for the click journal's replay tests: journal segments on disk, the mark
 * its writer committed, and the click records that made it into the database. The formats are the journal's own
 * (src/modules/clicks/transport/click-journal.ts); a test that wants a broken file writes the broken part itself.
 */

/** The journal's folder in an app's data directory, created if missing. */
export function journalDir(t: Pick<TestApp, 'config'>): string {
  const dir = path.join(t.config.dataDir, 'click-journal');
  mkdirSync(dir, { recursive: true });
  return dir;
}

export interface JournaledClick {
  linkId: number;
  shortCode: string;
  clickedAt: number;
  ip: string;
  userAgent: string;
}

/** One click line of a segment: its position (a string: the earlier keyed format) and the click. */
export const journalLine = (position: number | string, c: JournaledClick): string =>
  JSON.stringify([position, c.linkId, c.shortCode, c.clickedAt, c.ip, c.userAgent, null, null, null]);

/**
 * Writes segment `seq` (clicks-000000000001.journal for 1) of journal `journal`, whose first line is position
 * `first`: the header, then `lines`, each ended by a newline — unless `torn` is given, a last line cut short
 * (a process killed mid-write) that is written without one.
 */
export function writeJournalSegment(
  dir: string,
  seq: number,
  head: { journal: string; first: number },
  lines: string[],
  torn?: string,
): void {
  const text = [JSON.stringify(head), ...lines].join('\n') + (torn === undefined ? '\n' : `\n${torn}`);
  writeFileSync(path.join(dir, `clicks-${String(seq).padStart(12, '0')}.journal`), text);
}

/** The mark the earlier process's writer committed for its journal (click_journal_marks). */
export async function seedJournalMark(
  t: Pick<TestApp, 'storage'>,
  mark: { journal: string; committed: number; window_end?: number; window_link?: number; window_count?: number },
): Promise<void> {
  await t.storage.db.insertInto('click_journal_marks').values(mark).execute();
}

/**
 * Click records the database already holds for a link that had none, one per IP address in `ips`, at `at`, with
 * the fields a click of the journal's format has (none parsed, no referrer), and the link's click_count set to
 * their number.
 */
export async function seedClickRecords(
  t: Pick<TestApp, 'storage'>,
  link: { id: number; short_code: string },
  at: number,
  userAgent: string,
  ips: string[],
): Promise<void> {
  for (const ip of ips) {
    const parsed = { is_bot: 0, browser: null, os: null, device: null, country: null };
    const click = { link_id: link.id, short_code: link.short_code, clicked_at: at, ip, user_agent: userAgent };
    await t.storage.db
      .insertInto('clicks')
      .values({ ...click, referrer: null, click_key: null, ...parsed })
      .execute();
  }
  await t.storage.db.updateTable('links').set({ click_count: ips.length }).where('id', '=', link.id).execute();
}
