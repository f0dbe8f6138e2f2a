import type { Kysely, Transaction } from 'kysely';
import type { Storage } from '../../db/database.js';
import type { Database, LinkRow } from '../../db/types.js';
import { recordEvent, type LinkField, type OutboxEvent } from '../../db/outbox.js';
import { namesOf, type NamedLink } from './link-aliases.js';

/** What the links' writes share: the row's tags, its names in events, the announcement of a change. */

export type Db = Kysely<Database> | Transaction<Database>;

/** The fields a PATCH may change (the service has validated them). */
export type LinkChanges = Partial<Pick<LinkRow, LinkField>>;

/** A link's names for its events (db/outbox-events.ts). */
export const linkNames = (link: NamedLink) => ({
  link_id: Number(link.id),
  domain_id: link.domain_id,
  names: namesOf(link),
});

export const tagsOf = (row: Pick<LinkRow, 'tags'>): string[] => (row.tags === '' ? [] : row.tags.split(','));

export async function writeTags(tx: Db, linkId: number, tags: string[]): Promise<void> {
  if (tags.length)
    await tx
      .insertInto('link_tags')
      .values(tags.map((tag) => ({ link_id: linkId, tag })))
      .execute();
}

/**
 * Writes a change's event to the outbox in its transaction (db/outbox.ts): every instance's link cache, and beside
 * the CLI the embedded server's, forgets the names it names. `toAll`: this instance hears it too, for a change
 * inside a caller's transaction, whose commit comes after the service dropped the names from the cache: a visit in
 * between may have cached the state before it.
 */
export type Announce = (tx: Db, event: OutboxEvent, at: number, toAll?: boolean) => Promise<void>;

export function linkChangeAnnouncer(dialect: Pick<Storage['dialect'], 'notify'>, changeOrigin: string): Announce {
  return (tx, event, at, toAll = false) => recordEvent(tx, dialect, event, { origin: toAll ? null : changeOrigin, at });
}
