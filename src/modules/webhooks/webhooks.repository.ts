import { domainOwners } from '../../db/domain-owners.js';
import type { Insertable, Kysely, Selectable, Updateable } from 'kysely';
import { recordAudit, type AuditEntry } from '../../db/audit-log.js';
import { eventsEnd } from '../../db/events.js';
import type { Database, WebhookDeliveriesTable, WebhooksTable } from '../../db/types.js';
import type { Paginator, ResolvedList } from '../../lib/pagination.js';

export type WebhookRow = Selectable<WebhooksTable>;
export type DeliveryRow = Selectable<WebhookDeliveriesTable>;

/** The SQL of the webhooks resource: hooks, and their deliveries as the API lists them. */
export function createWebhooksRepository(db: Kysely<Database>, paginator: Paginator) {
  return {
    /** The hook, and its creation in the audit log (SPEC §23) in the same transaction. */
    async insert(row: Insertable<WebhooksTable>, audit?: Omit<AuditEntry, 'target'>): Promise<WebhookRow> {
      return db.transaction().execute(async (tx) => {
        // It hears what comes after this moment (webhook-fanout.ts), wherever the fan-out's position stands.
        const end = await eventsEnd(tx);
        const created = await tx
          .insertInto('webhooks')
          .values({ ...row, after_event: end })
          .returningAll()
          .executeTakeFirstOrThrow();
        if (audit) await recordAudit(tx, { ...audit, target: { type: 'webhook', id: Number(created.id) } });
        return created;
      });
    },

    async findById(id: number): Promise<WebhookRow | undefined> {
      return db.selectFrom('webhooks').selectAll().where('id', '=', id).executeTakeFirst();
    },

    /** One page of hooks: a user's (userId), or every hook (null, an admin). */
    async list(userId: number | null, list: ResolvedList): Promise<{ rows: WebhookRow[]; total: number | null }> {
      let base = db.selectFrom('webhooks');
      if (userId !== null) base = base.where('user_id', '=', userId);
      const rows = await paginator.apply(base.selectAll('webhooks'), list, 'webhooks').execute();
      const total =
        list.mode === 'page'
          ? Number((await base.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n)
          : null;
      return { rows, total };
    },

    async update(id: number, set: Updateable<WebhooksTable>): Promise<WebhookRow | undefined> {
      return db.updateTable('webhooks').set(set).where('id', '=', id).returningAll().executeTakeFirst();
    },

    async remove(id: number, audit?: AuditEntry): Promise<boolean> {
      // Its deliveries go first: SQLite enforces no foreign keys here, and a pending one must not outlive its hook.
      return db.transaction().execute(async (tx) => {
        await tx.deleteFrom('webhook_deliveries').where('webhook_id', '=', id).execute();
        const res = await tx.deleteFrom('webhooks').where('id', '=', id).executeTakeFirst();
        const removed = Number(res.numDeletedRows) > 0;
        if (removed && audit) await recordAudit(tx, audit);
        return removed;
      });
    },

    domainOwners: (ids: readonly number[]) => domainOwners(db, ids),

    /** A hook's attempts, newest first (made or pending), one cursor page. */
    async deliveries(webhookId: number, list: ResolvedList): Promise<DeliveryRow[]> {
      const base = db.selectFrom('webhook_deliveries').selectAll().where('webhook_id', '=', webhookId);
      return paginator.apply(base, list, 'webhook_deliveries').execute();
    },

    async findDelivery(webhookId: number, id: number): Promise<DeliveryRow | undefined> {
      return db
        .selectFrom('webhook_deliveries')
        .selectAll()
        .where('webhook_id', '=', webhookId)
        .where('id', '=', id)
        .executeTakeFirst();
    },

    async insertDelivery(row: Insertable<WebhookDeliveriesTable>): Promise<DeliveryRow> {
      return db.insertInto('webhook_deliveries').values(row).returningAll().executeTakeFirstOrThrow();
    },
  };
}

export type WebhooksRepository = ReturnType<typeof createWebhooksRepository>;
