import type { Kysely } from 'kysely';
import type { Database } from '../../db/types.js';
import type { AppLinkDocument } from '../../lib/app-links.js';

/** The default domain's app links (SPEC §21), one row of instance_settings per document (migration 042). */
export function createInstanceSettings(db: Kysely<Database>) {
  return {
    async appLinks(): Promise<Record<AppLinkDocument, string | null>> {
      const rows = await db.selectFrom('instance_settings').select(['name', 'value']).execute();
      const value = (name: AppLinkDocument) => rows.find((r) => r.name === name)?.value ?? null;
      return {
        apple_app_site_association: value('apple_app_site_association'),
        android_asset_links: value('android_asset_links'),
      };
    },

    async appLink(name: AppLinkDocument): Promise<string | null> {
      const row = await db.selectFrom('instance_settings').select('value').where('name', '=', name).executeTakeFirst();
      return row?.value ?? null;
    },

    /** Sets (text) or clears (null) each document named, in one transaction. */
    async setAppLinks(changes: Partial<Record<AppLinkDocument, string | null>>, at: number): Promise<void> {
      await db.transaction().execute(async (tx) => {
        for (const [name, value] of Object.entries(changes)) {
          if (value === null) {
            await tx.deleteFrom('instance_settings').where('name', '=', name).execute();
            continue;
          }
          await tx
            .insertInto('instance_settings')
            .values({ name, value, updated_at: at })
            .onConflict((oc) => oc.column('name').doUpdateSet({ value, updated_at: at }))
            .execute();
        }
      });
    },
  };
}

export type InstanceSettings = ReturnType<typeof createInstanceSettings>;
