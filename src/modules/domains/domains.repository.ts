import type { Kysely, Transaction } from 'kysely';
import type { Dialect } from '../../db/dialect.js';
import type { Database, DomainRow, DomainsTable } from '../../db/types.js';
import { domainChangeMessage, LINK_CHANGES_CHANNEL } from '../../infra/pg-link-cache-bus.js';
import type { Paginator, ResolvedList } from '../../lib/pagination.js';
import type { Insertable, Updateable } from 'kysely';

type Db = Kysely<Database> | Transaction<Database>;

export type DomainChanges = Omit<Updateable<DomainsTable>, 'id' | 'version' | 'created_at'>;

export type DomainsRepository = ReturnType<typeof createDomainsRepository>;

/** The queries that change nothing, so announce nothing. */
function createDomainRowReads(db: Kysely<Database>, paginator: Paginator) {
  return {
    async all(): Promise<DomainRow[]> {
      return db.selectFrom('domains').selectAll().execute();
    },

    async findById(id: number, tx: Db = db): Promise<DomainRow | undefined> {
      return tx.selectFrom('domains').selectAll().where('id', '=', id).executeTakeFirst();
    },

    async findByHostname(hostname: string): Promise<DomainRow | undefined> {
      return db.selectFrom('domains').selectAll().where('hostname', '=', hostname).executeTakeFirst();
    },

    async findByToken(token: string): Promise<DomainRow | undefined> {
      return db.selectFrom('domains').selectAll().where('token', '=', token).executeTakeFirst();
    },

    async dueForCheck(before: number, limit: number): Promise<DomainRow[]> {
      return db.selectFrom('domains').selectAll()
        .where('verified_at', 'is not', null)
        .where((eb) => eb.or([eb('checked_at', 'is', null), eb('checked_at', '<=', before)]))
        .orderBy('checked_at').limit(limit).execute();
    },

    async countLinks(id: number): Promise<number> {
      const row = await db.selectFrom('links').select((eb) => eb.fn.countAll<number>().as('n')).where('domain_id', '=', id).executeTakeFirstOrThrow();
      return Number(row.n);
    },

    /** `only`: these ids alone (an API key limited to them). */
    async list(ownerId: number | null, list: ResolvedList, only: readonly number[] | null = null): Promise<{ rows: DomainRow[]; total: number | null }> {
      let base = db.selectFrom('domains');
      if (ownerId !== null) base = base.where('owner_id', '=', ownerId);
      if (only !== null) base = base.where('id', 'in', [...only, -1]);
      const rows = await paginator.apply(base.selectAll('domains'), list, 'domains').execute();
      const total = list.mode === 'page'
        ? Number((await base.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n)
        : null;
      return { rows, total };
    },
  };
}

/**
 * Every change is announced in its own transaction on the link-change channel (dialect.notify: NOTIFY on
 * PostgreSQL), so every instance's registry follows within the feed's bound.
 */
function createAnnouncedDomainWrites(db: Kysely<Database>, announce: (tx: Db, id: number) => Promise<void>) {
  return {
    /** A taken host name surfaces as a unique violation (the one arbiter, whatever the case it was sent in). */
    async insert(row: Insertable<DomainsTable>): Promise<DomainRow> {
      return db.transaction().execute(async (tx) => {
        const created = await tx.insertInto('domains').values(row).returningAll().executeTakeFirstOrThrow();
        await announce(tx, created.id);
        return created;
      });
    },

    /** With `expectedVersion` the update is conditional (If-Match); undefined when gone or moved on. */
    async update(id: number, changes: DomainChanges, expectedVersion: number | null): Promise<DomainRow | undefined> {
      return db.transaction().execute(async (tx) => {
        let q = tx.updateTable('domains').set((eb) => ({ ...changes, version: eb('version', '+', 1) })).where('id', '=', id);
        if (expectedVersion !== null) q = q.where('version', '=', expectedVersion);
        const row = await q.returningAll().executeTakeFirst();
        if (row) await announce(tx, id);
        return row;
      });
    },

    /**
     * The re-check's claim: only one instance checks a domain per round (the one whose update matched). Not
     * announced: checked_at is no part of what the registry holds.
     */
    async claimCheck(id: number, seenCheckedAt: number | null, at: number): Promise<boolean> {
      let q = db.updateTable('domains').set({ checked_at: at }).where('id', '=', id);
      q = seenCheckedAt === null ? q.where('checked_at', 'is', null) : q.where('checked_at', '=', seenCheckedAt);
      return Number((await q.executeTakeFirst()).numUpdatedRows) === 1;
    },

    /**
     * Deletes the domain; with `withLinks`, its links (clicks and rollups go with them by cascade) and its
     * codes first. False when the domain was already gone.
     */
    async remove(id: number, withLinks: boolean): Promise<boolean> {
      return db.transaction().execute(async (tx) => {
        if (withLinks) {
          await tx.deleteFrom('links').where('domain_id', '=', id).execute();
          await tx.deleteFrom('link_codes').where('domain_id', '=', id).execute();
        }
        const res = await tx.deleteFrom('domains').where('id', '=', id).executeTakeFirst();
        if (Number(res.numDeletedRows) === 0) return false;
        await announce(tx, id);
        return true;
      });
    },
  };
}

/** Plain rows in and out: the reads, and the writes that announce each change. */
export function createDomainsRepository(db: Kysely<Database>, dialect: Dialect, paginator: Paginator, origin: string) {
  const announce = (tx: Db, id: number) => dialect.notify(tx, LINK_CHANGES_CHANNEL, domainChangeMessage(origin, id));
  return { ...createDomainRowReads(db, paginator), ...createAnnouncedDomainWrites(db, announce) };
}
