import type { Kysely, Transaction } from 'kysely';
import { compiledInsert } from '../../db/compiled-inserts.js';
import type { Database, LinkRow } from '../../db/types.js';

type Db = Kysely<Database> | Transaction<Database>;

/**
 * Aliases (SPEC §20) in the namespace of codes: each is a row of link_codes (domain_id, code, link_id) like the
 * link's code, so the primary key keeps aliases and codes unique together per domain and the redirect's one
 * lookup finds either. `links.aliases` holds the live ones, comma-separated, for reading the record.
 */
/** What the repository needs of a link to name it on its domain: its code and its aliases. */
export type NamedLink = Pick<LinkRow, 'id' | 'short_code' | 'domain_id' | 'aliases'>;

export const aliasesOf = (row: Pick<LinkRow, 'aliases'>): string[] =>
  row.aliases === '' ? [] : row.aliases.split(',');
/** Every name a visit may reach the link by on its domain: the code, then the aliases. */
export const namesOf = (row: Pick<LinkRow, 'short_code' | 'aliases'>): string[] => [row.short_code, ...aliasesOf(row)];

/** An alias asked for is taken on the link's domain (by a code, another link's alias, or a tombstone). */
export class AliasTakenError extends Error {
  constructor(readonly alias: string) {
    super(`alias ${alias} is taken`);
  }
}

/**
 * THE claim of names on a domain, for one link (the API's) or a batch (the importers'): the rows whose name is
 * not issued yet there (live, or a tombstone) are inserted, the others left alone; the names inserted come back.
 * A name already issued is no error, so a claim never aborts the transaction it runs in (PostgreSQL would).
 */
export const claimNames = compiledInsert(
  ['domain_id', 'code', 'link_id'] as const,
  (db: Kysely<Database>, rows: Array<{ domain_id: number; code: string; link_id: number | null }>) =>
    db
      .insertInto('link_codes')
      .values(rows)
      .onConflict((oc) => oc.doNothing())
      .returning('code'),
);

/** Claims the aliases of a new link (after its code): a taken one fails the whole insert as AliasTakenError. */
export async function claimAliases(
  tx: Db,
  domainId: number,
  linkId: number,
  aliases: readonly string[],
): Promise<void> {
  if (aliases.length === 0) return;
  const claimed = new Set(
    (
      await claimNames(
        tx,
        aliases.map((code) => ({ domain_id: domainId, code, link_id: linkId })),
      )
    ).map((r) => r.code),
  );
  const taken = aliases.find((a) => !claimed.has(a));
  if (taken !== undefined) throw new AliasTakenError(taken);
}

/**
 * PATCH's new set of aliases: removed ones become tombstones (link_id kept, so that only this link may take one
 * back), added ones are claimed (this link's own tombstone revived, or a new row).
 */
export async function replaceAliases(tx: Db, link: NamedLink, after: readonly string[], at: number): Promise<void> {
  const before = aliasesOf(link);
  const removed = before.filter((a) => !after.includes(a));
  const added = after.filter((a) => !before.includes(a));
  if (removed.length) {
    await tx
      .updateTable('link_codes')
      .set({ retired_at: at, retired_reason: 'deleted' })
      .where('domain_id', '=', link.domain_id)
      .where('code', 'in', removed)
      .where('link_id', '=', link.id)
      .execute();
  }
  for (const alias of added) {
    const revived = await tx
      .updateTable('link_codes')
      .set({ retired_at: null, retired_reason: null })
      .where('domain_id', '=', link.domain_id)
      .where('code', '=', alias)
      .where('link_id', '=', link.id)
      .where('retired_reason', '=', 'deleted')
      .executeTakeFirst();
    if (Number(revived.numUpdatedRows) === 0) await claimAliases(tx, link.domain_id, link.id, [alias]);
  }
}
