import type { Kysely, Transaction } from 'kysely';
import type { Dialect } from '../../db/dialect.js';
import type { Database } from '../../db/types.js';
import type { ClickEvent } from '../clicks/index.js';
import { createImportDomains } from './import-domains.js';
import { createImportItemRecords, createImportJobEnds, createImportJobRecords } from './import-jobs.js';
import { createImportedLinkRecords, createPriorImports, createVisitMarks } from './imported-links.js';

type Tx = Transaction<Database>;

export type ImportsRepository = ReturnType<typeof createImportsRepository>;

/**
 * The import's own tables — jobs, their items, and which link each source item became (with how far its
 * visits came) — plus the domains an import puts links on. Plain statements inside the caller's transaction,
 * the same SQL on both engines; the links themselves are written by the links module (LinkImports). Each
 * part is in the file of what it holds: import-jobs.ts, imported-links.ts, import-domains.ts.
 */
export function createImportsRepository(deps: { db: Kysely<Database>; dialect: Dialect }) {
  return {
    ...createImportJobRecords(deps),
    ...createImportItemRecords(deps),
    ...createImportJobEnds(deps),
    ...createPriorImports(deps),
    ...createImportedLinkRecords(),
    ...createVisitMarks(deps),
    ...createImportDomains(deps),
  };
}

export type ImportedClickWriter = (tx: Tx, batch: readonly ClickEvent[]) => Promise<void>;

/** The owner of imported links: the named user, or the oldest active admin. */
export async function findImportOwner(
  db: Kysely<Database>,
  username: string | undefined,
): Promise<{ id: number; username: string; role: 'user' | 'admin' } | undefined> {
  let q = db.selectFrom('users').select(['id', 'username', 'role']).where('status', '=', 'active');
  q =
    username !== undefined
      ? q.where('username_lower', '=', username.toLowerCase())
      : q.where('role', '=', 'admin').orderBy('created_at').orderBy('id');
  const row = await q.limit(1).executeTakeFirst();
  return row ? { id: Number(row.id), username: row.username, role: row.role } : undefined;
}
