import type { Kysely, Transaction } from 'kysely';
import type { Storage } from '../../db/database.js';
import type { Database, LinkRow } from '../../db/types.js';
import { recordEvent, type LinkField, type OutboxEvent } from '../../db/outbox.js';
import { recordPublicEvents, type PublicEventInput } from '../../db/events.js';
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

/** The link as the v1 API shows it (link-record.ts), for SPEC §22's public events. */
export type PublicLinkOf = (row: LinkRow) => unknown;

/** A link's public event (SPEC §22): the link as the API shows it, whose it is, on which domain (null: the default). */
export const linkEventInput = (
  type: 'link.created' | 'link.updated' | 'link.deleted',
  row: LinkRow,
  publicLink: PublicLinkOf,
): PublicEventInput => ({
  type,
  data: publicLink(row),
  userId: row.user_id === null ? null : Number(row.user_id),
  domainId: row.domain_id ? Number(row.domain_id) : null,
  linkId: Number(row.id),
});

/** Writes a link's public event in the change's transaction (db/events.ts): it commits, or rolls back, with it. */
export type PublishLink = (
  tx: Db,
  type: 'link.created' | 'link.updated' | 'link.deleted',
  row: LinkRow,
  at: number,
) => Promise<void>;

export function linkPublisher(dialect: Pick<Storage['dialect'], 'notify'>, publicLink: PublicLinkOf): PublishLink {
  return async (tx, type, row, at) => {
    await recordPublicEvents(tx, dialect, [linkEventInput(type, row, publicLink)], { at });
  };
}
