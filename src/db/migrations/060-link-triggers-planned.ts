import type { Kysely } from 'kysely';
import type { Dialect } from '../dialect.js';
import { OWNER_TAGS_TRIGGER } from '../owner-tags.js';
import { OWNER_TOTALS_TRIGGER } from '../owner-totals.js';
import { linksStatementTriggers } from '../statement-triggers.js';
import { CLICK_ORDER_TRIGGER } from './056-link-click-order.js';
import { SEARCH_TEXT_TRIGGER } from './059-link-search-text.js';

/**
 * PostgreSQL: the statement-level triggers of `links` made again as this build writes them (migrations 050, 056,
 * 059): each statement planned for the transition tables of the call that runs it, and without JIT compilation
 * (db/statement-triggers.ts, `planned` and `noJit`, say why: a connection whose first update of links was one
 * row took minutes over a later click batch of 1,000 links at a million links). The tables they keep are not
 * touched. SQLite: nothing (its triggers are per row).
 */
export async function up(db: Kysely<unknown>, d: Dialect): Promise<void> {
  if (d.name !== 'postgres') return;
  for (const t of [OWNER_TOTALS_TRIGGER, OWNER_TAGS_TRIGGER, CLICK_ORDER_TRIGGER, SEARCH_TEXT_TRIGGER])
    await linksStatementTriggers(db, t);
}
