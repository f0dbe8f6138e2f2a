import { sql, type Kysely, type Transaction } from 'kysely';
import { fastStatements, type FastStatements, type Storage } from '../../db/database.js';
import { EVENTS_CHANNEL } from '../../db/events.js';
import { createSqliteScans, type SqliteScans } from '../../db/sqlite-scans.js';
import type { Database, LinkRow, NewLinkRow } from '../../db/types.js';
import type { Paginator } from '../../lib/pagination.js';
import { groupedInsert, type NewCodedLink } from './link-insert.sqlite.js';
import { aliasesOf, claimAliases, type NamedLink } from './link-aliases.js';
import { createLinkChanges } from './link-changes.repository.js';
import { createLinkQueries } from './link-queries.repository.js';
import {
  linkChangeAnnouncer,
  linkNames,
  linkPublisher,
  tagsOf,
  writeTags,
  type Announce,
  type Db,
  type PublicLinkOf,
  type PublishLink,
} from './link-rows.js';
import { linkRecord } from './link-record.js';

export type LinksRepository = ReturnType<typeof createLinksRepository>;

function createLinkInsertion(deps: {
  db: Kysely<Database>;
  fast: FastStatements | null;
  announce: Announce;
  publish: PublishLink;
  publicLink: PublicLinkOf;
  origin: string;
  /** a group of creations committed their events (outside Kysely: no notify of theirs wakes the readers) */
  eventsCommitted: () => void;
}) {
  const { db, fast, announce, publish } = deps;
  const insertGrouped = fast ? groupedInsert(fast, deps.origin, deps.publicLink, deps.eventsCommitted) : null;
  return {
    /**
     * Inserts the link (and its tags) and claims its code on its domain in one transaction. The primary key
     * of link_codes is the one arbiter of uniqueness, so a taken (or tombstoned) code surfaces as a unique
     * violation.
     */
    async insert(row: NewCodedLink, outer?: Transaction<Database>): Promise<LinkRow> {
      // On the embedded engine, outside a caller's transaction: prepared, committed with the other creations
      // of this event-loop turn (through Kysely, with a commit each, a creation cost about four times as much).
      if (!outer && insertGrouped) return insertGrouped(row);
      const claim = async (tx: Db) => {
        const created = await tx.insertInto('links').values(row).returningAll().executeTakeFirstOrThrow();
        await tx
          .insertInto('link_codes')
          .values({
            domain_id: created.domain_id,
            code: row.short_code,
            link_id: created.id,
            retired_at: null,
            retired_reason: null,
          })
          .execute();
        await claimAliases(tx, created.domain_id, created.id, aliasesOf(created));
        await writeTags(tx, created.id, tagsOf(created));
        // an instance may hold a cached "missing" for any of its names
        const event = { type: 'link.created', data: { ...linkNames(created), user_id: created.user_id } } as const;
        await announce(tx, event, created.created_at, outer !== undefined);
        await publish(tx, 'link.created', created, created.created_at);
        return created;
      };
      if (!outer) return db.transaction().execute(claim);
      // Inside a caller's transaction (an idempotent request) a collision must not abort the whole transaction
      // (PostgreSQL would refuse every later statement): the claim runs under a savepoint that a unique
      // violation rolls back, so the service can retry with another code.
      await sql`savepoint link_code_claim`.execute(outer);
      try {
        const created = await claim(outer);
        await sql`release savepoint link_code_claim`.execute(outer);
        return created;
      } catch (err) {
        await sql`rollback to savepoint link_code_claim`.execute(outer);
        throw err;
      }
    },
  };
}

/**
 * Plain rows in and out. One exception to "everything through Kysely" on the embedded engine, where a
 * better-sqlite3 prepared statement answers synchronously in a few microseconds: link creation, group-committed
 * (link-insert.sqlite.ts); the visit's reads are the redirect module's (redirect.repository.ts). PostgreSQL runs the
 * same queries through Kysely. Every change that a redirect could see is announced in its own transaction
 * (an event in the outbox, db/outbox.ts: read by every instance's link cache), signed with `changeOrigin`,
 * this app instance's name in the outbox. Each also writes its public event (SPEC §22, db/events.ts) in the same
 * transaction, carrying the link as the API shows it (`publicLink`: the service's view, with the link's domain).
 */
export function createLinksRepository(
  storage: Pick<Storage, 'db' | 'sqlite' | 'dialect'>,
  paginator: Paginator,
  changeOrigin = 'ferry',
  publicLink: PublicLinkOf = linkRecord('http://localhost'),
  /** where the lists' reads of every link run (linkScansOf); null: on the connection */
  scans: SqliteScans | null = null,
) {
  const { db, dialect } = storage;
  const fast = fastStatements(storage);
  const announce = linkChangeAnnouncer(dialect, changeOrigin);
  const publish = linkPublisher(dialect, publicLink);
  return {
    ...createLinkInsertion({
      db,
      fast,
      announce,
      publish,
      publicLink,
      origin: changeOrigin,
      eventsCommitted: () => void dialect.notify(db, EVENTS_CHANNEL, ''),
    }),
    ...createLinkChanges({ db, announce, publish }),
    ...createLinkQueries({ db, dialect, fast, paginator, scans }),
  };
}

/**
 * The embedded engine's scan thread (db/sqlite-scans.ts) for a database in a file, its owner to stop it; null
 * on PostgreSQL (whose reads do not hold the event loop).
 */
export function linkScansOf(storage: Pick<Storage, 'sqlite'>): SqliteScans | null {
  const file = storage.sqlite?.name;
  return file && file !== ':memory:' ? createSqliteScans(file) : null;
}

export type { NamedLink, NewCodedLink, NewLinkRow };
export { AliasTakenError, aliasesOf, namesOf } from './link-aliases.js';
export { tagsOf, type LinkChanges } from './link-rows.js';
export type { AllLinksFilter, LinkListFilter } from './link-queries.repository.js';
