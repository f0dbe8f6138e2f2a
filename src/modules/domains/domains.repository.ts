import type { Kysely, Transaction } from 'kysely';
import type { Dialect } from '../../db/dialect.js';
import type { Database, DomainRow, DomainsTable } from '../../db/types.js';
import { recordAudit, type AuditEntry } from '../../db/audit-log.js';
import { recordEvent, type DomainEvent } from '../../db/outbox.js';
import { recordPublicEvents } from '../../db/events.js';
import { domainRecord } from './domain-record.js';
import type { Paginator, ResolvedList } from '../../lib/pagination.js';
import type { Insertable, Updateable } from 'kysely';
import { claimsOf, insertClaim, retireDomainCodes } from './domain-claims.js';
import type { AppLinkDocument } from '../../lib/app-links.js';

type Db = Kysely<Database> | Transaction<Database>;

export type DomainChanges = Omit<Updateable<DomainsTable>, 'id' | 'version' | 'created_at'>;

export type DomainsRepository = ReturnType<typeof createDomainsRepository>;

/** The queries that change nothing, so announce nothing. */
function createDomainRowReads(db: Kysely<Database>, paginator: Paginator) {
  return {
    async all(): Promise<DomainRow[]> {
      return db.selectFrom('domains').selectAll().execute();
    },

    /** A domain's app-links document (SPEC §21) as stored: JSON text, null when it has none. */
    async appLink(id: number, name: AppLinkDocument): Promise<string | null> {
      const row = await db.selectFrom('domains').select(name).where('id', '=', id).executeTakeFirst();
      return row?.[name] ?? null;
    },

    async findById(id: number, tx: Db = db): Promise<DomainRow | undefined> {
      return tx.selectFrom('domains').selectAll().where('id', '=', id).executeTakeFirst();
    },

    /** Every claim of a host name, verified or not (SPEC §25: several users may claim an unverified name). */
    claimsOf: (hostname: string): Promise<DomainRow[]> => claimsOf(db, hostname),

    async findByToken(token: string): Promise<DomainRow | undefined> {
      return db.selectFrom('domains').selectAll().where('token', '=', token).executeTakeFirst();
    },

    async dueForCheck(before: number, limit: number): Promise<DomainRow[]> {
      return db
        .selectFrom('domains')
        .selectAll()
        .where('verified_at', 'is not', null)
        .where((eb) => eb.or([eb('checked_at', 'is', null), eb('checked_at', '<=', before)]))
        .orderBy('checked_at')
        .limit(limit)
        .execute();
    },

    async countLinks(id: number): Promise<number> {
      const row = await db
        .selectFrom('links')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('domain_id', '=', id)
        .executeTakeFirstOrThrow();
      return Number(row.n);
    },

    /** `only`: these ids alone (an API key limited to them). */
    async list(
      ownerId: number | null,
      list: ResolvedList,
      only: readonly number[] | null = null,
    ): Promise<{ rows: DomainRow[]; total: number | null }> {
      let base = db.selectFrom('domains');
      if (ownerId !== null) base = base.where('owner_id', '=', ownerId);
      if (only !== null) base = base.where('id', 'in', [...only, -1]);
      const rows = await paginator.apply(base.selectAll('domains'), list, 'domains').execute();
      const total =
        list.mode === 'page'
          ? Number((await base.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n)
          : null;
      return { rows, total };
    },
  };
}

type AnnounceDomain = (tx: Db, type: DomainEvent['type'], id: number) => Promise<void>;

/** SPEC §22's public domain events: what a re-check or a verification makes of a domain. */
export type PublicDomainEvent = 'domain.verified' | 'domain.failing';

/** Writes a domain's public event (the domain as the API shows it, at `at`) in the change's transaction. */
type PublishDomain = (tx: Db, type: PublicDomainEvent, row: DomainRow, at: number) => Promise<void>;

/** markVerified's transaction: the claim verified, the name's other claims removed with their links and codes. */
async function verifyClaim(
  tx: Db,
  id: number,
  changes: DomainChanges,
  announce: AnnounceDomain,
  publish: PublishDomain,
): Promise<{ row: DomainRow; removed: number[] } | undefined> {
  const row = await tx
    .updateTable('domains')
    .set((eb) => ({ ...changes, version: eb('version', '+', 1) }))
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirst();
  if (!row) return undefined;
  await announce(tx, 'domain.verified', id);
  await publish(tx, 'domain.verified', row, Number(row.updated_at));
  const others = await tx
    .selectFrom('domains')
    .select('id')
    .where('hostname', '=', row.hostname)
    .where('id', '!=', id)
    .execute();
  const removed = others.map((r) => Number(r.id));
  if (removed.length) {
    await tx.deleteFrom('links').where('domain_id', 'in', removed).execute();
    await tx.deleteFrom('link_codes').where('domain_id', 'in', removed).execute();
    await tx.deleteFrom('domains').where('id', 'in', removed).execute();
    for (const gone of removed) await announce(tx, 'domain.deleted', gone);
  }
  return { row, removed };
}

/** The domain's row changed and its version moved on; with `expectedVersion`, only from that version. */
function updateDomainRow(tx: Kysely<Database>, id: number, changes: DomainChanges, expectedVersion: number | null) {
  let q = tx
    .updateTable('domains')
    .set((eb) => ({ ...changes, version: eb('version', '+', 1) }))
    .where('id', '=', id);
  if (expectedVersion !== null) q = q.where('version', '=', expectedVersion);
  return q.returningAll().executeTakeFirst();
}

/**
 * Every change writes its event to the outbox in its own transaction (db/outbox.ts), so every instance's registry
 * follows within the feed's bound.
 */
function createAnnouncedDomainWrites(db: Kysely<Database>, announce: AnnounceDomain, publish: PublishDomain) {
  return {
    /** A second claim of one owner surfaces as a unique violation (the arbiter when two requests race). */
    async insert(row: Insertable<DomainsTable>, audit?: Omit<AuditEntry, 'target'>): Promise<DomainRow> {
      return db.transaction().execute(async (tx) => {
        const created = await insertClaim(tx, row);
        await announce(tx, 'domain.created', created.id);
        if (audit) await recordAudit(tx, { ...audit, target: { type: 'domain', id: created.id } });
        return created;
      });
    },

    /**
     * The claim `id` is verified (SPEC §25): the other claims of its host name are removed with their links and
     * codes, in the same transaction. Their links never served a visit (only a verified domain serves), and
     * their codes are not retired: a claim that lost leaves nothing on the name it did not own. A verified
     * claim of the name already there surfaces as a unique violation. Undefined when the claim is gone.
     */
    async markVerified(
      id: number,
      changes: DomainChanges,
      audit?: AuditEntry,
    ): Promise<{ row: DomainRow; removed: number[] } | undefined> {
      return db.transaction().execute(async (tx) => {
        const verified = await verifyClaim(tx, id, changes, announce, publish);
        if (verified && audit) await recordAudit(tx, audit);
        return verified;
      });
    },

    /**
     * With `expectedVersion` the update is conditional (If-Match); undefined when gone or moved on. `publicEvent`:
     * the change is one of SPEC §22's (a re-check found the domain failing, or verified again), written with it.
     */
    async update(
      id: number,
      changes: DomainChanges,
      expectedVersion: number | null,
      publicEvent?: { type: PublicDomainEvent; at: number },
    ): Promise<DomainRow | undefined> {
      return db.transaction().execute(async (tx) => {
        const row = await updateDomainRow(tx, id, changes, expectedVersion);
        if (row) await announce(tx, 'domain.updated', id);
        if (row && publicEvent) await publish(tx, publicEvent.type, row, publicEvent.at);
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
     * Deletes the domain; with `withLinks`, its links (clicks and rollups go with them by cascade). Its codes
     * are kept by host name for the next claim of it (retireDomainCodes). False when it was already gone.
     */
    async remove(id: number, withLinks: boolean, at: number, audit?: AuditEntry): Promise<boolean> {
      return db.transaction().execute(async (tx) => {
        const row = await tx
          .selectFrom('domains')
          .select(['id', 'hostname', 'owner_id', 'verified_at'])
          .where('id', '=', id)
          .executeTakeFirst();
        if (!row) return false;
        if (withLinks) await tx.deleteFrom('links').where('domain_id', '=', id).execute();
        await retireDomainCodes(tx, row, at);
        await tx.deleteFrom('domains').where('id', '=', id).execute();
        await announce(tx, 'domain.deleted', id);
        if (audit) await recordAudit(tx, audit);
        return true;
      });
    },
  };
}

/** Plain rows in and out: the reads, and the writes that announce each change. */
export function createDomainsRepository(db: Kysely<Database>, dialect: Dialect, paginator: Paginator, origin: string) {
  const announce: AnnounceDomain = (tx, type, id) =>
    recordEvent(tx, dialect, { type, data: { domain_id: Number(id) } }, { origin });
  const publish: PublishDomain = async (tx, type, row, at) => {
    const data = domainRecord(row, at);
    const userId = row.owner_id === null ? null : Number(row.owner_id);
    await recordPublicEvents(tx, dialect, [{ type, data, userId, domainId: Number(row.id) }], { at });
  };
  return { ...createDomainRowReads(db, paginator), ...createAnnouncedDomainWrites(db, announce, publish) };
}
