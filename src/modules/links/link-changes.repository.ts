import { recordAudit, type AuditActor } from '../../db/audit-log.js';
import type { Kysely } from 'kysely';
import type { Database, LinkRow } from '../../db/types.js';
import type { LinkField } from '../../db/outbox.js';
import { aliasesOf, claimAliases, namesOf, replaceAliases, type NamedLink } from './link-aliases.js';
import {
  linkNames,
  tagsOf,
  writeTags,
  type Announce,
  type Db,
  type LinkChanges,
  type PublishLink,
} from './link-rows.js';

/**
 * A link moved to another domain: every name is retired on the old one (by name, through the primary key) and
 * claimed on the new one (a unique violation when its code is taken there, AliasTakenError for an alias).
 */
async function moveNames(tx: Db, link: NamedLink, row: LinkRow, at: number): Promise<void> {
  await tx
    .updateTable('link_codes')
    .set({ link_id: null, retired_at: at, retired_reason: 'deleted' })
    .where('domain_id', '=', link.domain_id)
    .where('code', 'in', namesOf(link))
    .where('link_id', '=', link.id)
    .execute();
  await tx
    .insertInto('link_codes')
    .values({
      domain_id: row.domain_id,
      code: row.short_code,
      link_id: link.id,
      retired_at: null,
      retired_reason: null,
    })
    .execute();
  await claimAliases(tx, row.domain_id, link.id, aliasesOf(row));
}

/** A deleted link's clicks stay counted on its owner's account (deleted_link_clicks, deleted_link_bots). */
async function creditOwner(
  tx: Db,
  gone: { user_id: number | null; click_count: number | bigint; bot_clicks: number | bigint },
): Promise<void> {
  if (gone.user_id === null || Number(gone.click_count) <= 0) return;
  await tx
    .updateTable('users')
    .set((eb) => ({
      deleted_link_clicks: eb('deleted_link_clicks', '+', Number(gone.click_count)),
      deleted_link_bots: eb('deleted_link_bots', '+', Number(gone.bot_clicks)),
    }))
    .where('id', '=', gone.user_id)
    .execute();
}

/** A PATCH and a link's end (deleted or expired), each in its own transaction. */
/** SPEC §23: a link an admin (or the CLI) disabled, in the change's transaction; not one disabled already. */
async function auditDisabled(
  tx: Kysely<Database>,
  link: object,
  changes: LinkChanges,
  row: LinkRow,
  actor: AuditActor,
  at: number,
): Promise<void> {
  const wasDisabled = 'disabled_at' in link && link.disabled_at !== null;
  if (changes.disabled_at == null || wasDisabled) return;
  await recordAudit(tx, {
    action: 'link.disabled',
    actor,
    target: { type: 'link', id: row.short_code },
    details: { link_id: Number(row.id), reason: row.disabled_reason },
    at,
  });
}

export function createLinkChanges(deps: { db: Kysely<Database>; announce: Announce; publish: PublishLink }) {
  const { db, announce, publish } = deps;
  return {
    /**
     * Applies a PATCH: the version grows by one, tags are rewritten when they changed. With `expectedVersion`
     * the update is conditional (If-Match); undefined when the link is gone or its version moved on. A move
     * to another domain claims the code there (a unique violation when it is taken) and retires it here.
     */
    async update(
      link: NamedLink,
      changes: LinkChanges,
      expectedVersion: number | null,
      at: number,
      /** who made the change (SPEC §23): a link that becomes disabled is audited in the change's transaction */
      actor?: AuditActor,
    ): Promise<LinkRow | undefined> {
      const { id } = link;
      return db.transaction().execute(async (tx) => {
        let q = tx
          .updateTable('links')
          .set((eb) => ({ ...changes, updated_at: at, version: eb('version', '+', 1) }))
          .where('id', '=', id);
        if (expectedVersion !== null) q = q.where('version', '=', expectedVersion);
        const row = await q.returningAll().executeTakeFirst();
        if (!row) return undefined;
        if (changes.tags !== undefined) {
          await tx.deleteFrom('link_tags').where('link_id', '=', id).execute();
          await writeTags(tx, id, tagsOf(row));
        }
        if (row.domain_id !== link.domain_id) {
          await moveNames(tx, link, row, at);
        } else if (changes.aliases !== undefined) {
          await replaceAliases(tx, link, aliasesOf(row), at);
        }
        const changed = Object.keys(changes) as LinkField[];
        const before = { domain_id: link.domain_id, names: namesOf(link) };
        await announce(tx, { type: 'link.updated', data: { ...linkNames(row), changed, before } }, at);
        await publish(tx, 'link.updated', row, at);
        if (actor !== undefined) await auditDisabled(tx, link, changes, row, actor, at);
        return row;
      });
    },

    /**
     * Removes the link (its clicks, rollups and tags go with it by cascade) and leaves the code as a
     * tombstone; its owner's account keeps its click counts (deleted_link_clicks). False when the link was
     * already gone.
     */
    async retire(link: NamedLink, reason: 'deleted' | 'expired', at: number): Promise<boolean> {
      return db.transaction().execute(async (tx) => {
        const gone = await tx.deleteFrom('links').where('id', '=', link.id).returningAll().executeTakeFirst();
        if (!gone) return false;
        await creditOwner(tx, gone);
        // Every name of the link on its domain becomes a tombstone (found by name: the primary key; aliases
        // removed before are tombstones already).
        await tx
          .updateTable('link_codes')
          .set({ retired_at: at, retired_reason: reason })
          .where('domain_id', '=', link.domain_id)
          .where('code', 'in', namesOf(link))
          .where('link_id', '=', link.id)
          .execute();
        await announce(tx, { type: 'link.deleted', data: { ...linkNames(link), reason } }, at);
        // the link as it was (its last state, with the names it had)
        await publish(tx, 'link.deleted', gone, at);
        return true;
      });
    },
  };
}
