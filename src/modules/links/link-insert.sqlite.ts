import type { FastStatements } from '../../db/database.js';
import type { LinkRow, NewLinkRow } from '../../db/types.js';
import type { LinkCreated } from '../../db/outbox.js';
import { newEventId } from '../../db/event-ids.js';
import { linkEventInput, type PublicLinkOf } from './link-rows.js';
import { AliasTakenError, namesOf } from './link-aliases.js';

export type NewCodedLink = NewLinkRow & { short_code: string };

const COLUMNS = [
  'short_code',
  'domain_id',
  'user_id',
  'original_url',
  'expires_at',
  'created_at',
  'updated_at',
  'max_visits',
  'forward_query',
  'password_hash',
  'tags',
  'title',
  'aliases',
  'rules',
  'preview',
  'fallback_url',
] as const;
type Values = { [K in (typeof COLUMNS)[number]]: unknown };

/** One link's insert, its code, aliases, tags and its `link.created` event, as one (nested) transaction. */
function insertOne(sqlite: FastStatements, origin: string, publicLink: PublicLinkOf): (row: NewCodedLink) => LinkRow {
  const claim = sqlite.prepare(
    'insert into link_codes (domain_id, code, link_id, retired_at, retired_reason) values (?, ?, ?, null, null)',
  );
  const insert = sqlite.prepare<Values, LinkRow>(
    `insert into links (${COLUMNS.join(', ')}) values (${COLUMNS.map((c) => `@${c}`).join(', ')}) returning *`,
  );
  const tag = sqlite.prepare('insert into link_tags (link_id, tag) values (?, ?)');
  // The link's event (db/outbox.ts), in its transaction; no wake-up to send on the embedded engine.
  const event = sqlite.prepare('insert into outbox (type, payload, origin, created_at) values (?, ?, ?, ?)');
  const createdEvent = (row: LinkRow): string => {
    const data: LinkCreated['data'] = {
      link_id: row.id,
      domain_id: row.domain_id,
      names: namesOf(row),
      user_id: row.user_id,
    };
    return JSON.stringify(data);
  };
  // Its public event (SPEC §22, db/events.ts's row), in the same transaction.
  const publicEvent = sqlite.prepare(
    'insert into events (event_id, type, user_id, domain_id, link_id, payload, created_at) values (?, ?, ?, ?, ?, ?, ?)',
  );
  const publish = (row: LinkRow): void => {
    const input = linkEventInput('link.created', row, publicLink);
    const id = newEventId();
    const envelope = { id, type: input.type, timestamp: new Date(row.created_at).toISOString(), data: input.data };
    publicEvent.run(
      id,
      input.type,
      input.userId,
      input.domainId,
      input.linkId,
      JSON.stringify(envelope),
      row.created_at,
    );
  };
  return sqlite.transaction((row: NewCodedLink): LinkRow => {
    const values = Object.fromEntries(COLUMNS.map((c) => [c, row[c] ?? null])) as Values;
    values.domain_id = row.domain_id ?? 0;
    values.aliases = row.aliases ?? '';
    const created = insert.get(values)!;
    claim.run(created.domain_id, created.short_code, created.id);
    if (created.aliases !== '') {
      for (const alias of created.aliases.split(',')) {
        try {
          claim.run(created.domain_id, alias, created.id);
        } catch (err) {
          throw (err as { code?: string }).code?.startsWith('SQLITE_CONSTRAINT') ? new AliasTakenError(alias) : err;
        }
      }
    }
    if (created.tags !== '') for (const t of created.tags.split(',')) tag.run(created.id, t);
    event.run('link.created' satisfies LinkCreated['type'], createdEvent(created), origin, created.created_at);
    publish(created);
    return created;
  });
}

/**
 * Link creation on the embedded engine with better-sqlite3 prepared statements, group-committed: the inserts
 * asked for during one turn of the event loop are written at the next (setImmediate) in one transaction, each
 * under its own savepoint (better-sqlite3 nests a transaction as a savepoint), so a taken code fails its own
 * insert only. A commit costs per page it writes to the WAL (the links table, its indexes, link_codes), and
 * concurrent creations share most of those pages; each caller still hears of its link only once it is
 * committed.
 *
 * Only outside Kysely's transactions (FastStatements.usable): if one holds the connection when the group
 * is due, the group waits for the next turn.
 */
export function groupedInsert(
  sqlite: FastStatements,
  origin: string,
  publicLink: PublicLinkOf,
  /** after a group committed: its links' events are there to read (the events' readers are woken) */
  committed: () => void = () => undefined,
): (row: NewCodedLink) => Promise<LinkRow> {
  const one = insertOne(sqlite, origin, publicLink);
  type Waiting = { row: NewCodedLink; resolve: (row: LinkRow) => void; reject: (err: unknown) => void };
  let waiting: Waiting[] = [];
  const group = sqlite.transaction((batch: Waiting[]) =>
    batch.map((w): { row: LinkRow } | { err: unknown } => {
      try {
        return { row: one(w.row) };
      } catch (err) {
        return { err };
      }
    }),
  );
  const flush = (): void => {
    if (!sqlite.usable()) {
      setImmediate(flush);
      return;
    }
    const batch = waiting;
    waiting = [];
    let outcomes: Array<{ row: LinkRow } | { err: unknown }>;
    try {
      outcomes = group.immediate(batch); // the write lock first (database.ts: ImmediateSqliteDriver)
    } catch (err) {
      for (const w of batch) w.reject(err);
      return;
    }
    batch.forEach((w, i) => {
      const o = outcomes[i]!;
      if ('row' in o) w.resolve(o.row);
      else w.reject(o.err);
    });
    if (outcomes.some((o) => 'row' in o)) committed();
  };
  return (row) =>
    new Promise<LinkRow>((resolve, reject) => {
      if (waiting.length === 0) setImmediate(flush);
      waiting.push({ row, resolve, reject });
    });
}
