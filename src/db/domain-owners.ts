import type { Kysely } from 'kysely';
import type { Database } from './types.js';

/**
 * The owners of these domains, by id (null: the instance's); a missing id is no domain. For what may be limited
 * to domains its user may use: an API key (SPEC §14), a webhook (SPEC §22).
 */
export async function domainOwners(db: Kysely<Database>, ids: readonly number[]): Promise<Map<number, number | null>> {
  if (ids.length === 0) return new Map();
  const rows = await db
    .selectFrom('domains')
    .select(['id', 'owner_id'])
    .where('id', 'in', [...ids])
    .execute();
  return new Map(rows.map((r) => [Number(r.id), r.owner_id === null ? null : Number(r.owner_id)]));
}
