import type { Kysely, Transaction } from 'kysely';
import type { Dialect } from '../../db/dialect.js';
import type { Database } from '../../db/types.js';
import { claimDomain, findDomainFor } from '../domains/index.js';

type Tx = Transaction<Database>;

/** Who the imported links will belong to: the owner's id, and whether an admin (who may use any domain, §19). */
export interface ImportOwner {
  id: number;
  role: 'user' | 'admin';
}

/** A host name's domain for an import's owner: its id, or why the owner may not put links on it. */
export type ImportDomain = { id: number } | { notOwned: true };

/**
 * The domains an import puts links on (SPEC §19, §25), as the domains module names a host name for the owner
 * (findDomainFor: the verified domain, else the owner's own claim, else for an admin the oldest claim). A link
 * goes there only when the owner owns it, or is an admin; another user's verified domain fails the item
 * DOMAIN_NOT_OWNED. A host name that is no domain for the owner yet becomes the owner's own claim (unverified:
 * it serves no visit until verified), made as one made through the API.
 */
export function createImportDomains(deps: { dialect: Dialect }) {
  const { dialect } = deps;
  return {
    async domainsFor(
      tx: Tx | Kysely<Database>,
      hostnames: readonly string[],
      owner: ImportOwner,
      create: { at: number } | null,
    ): Promise<Map<string, ImportDomain>> {
      const out = new Map<string, ImportDomain>();
      const admin = owner.role === 'admin';
      for (const hostname of hostnames) {
        const found = await findDomainFor(tx, hostname, { userId: owner.id, admin });
        if (found)
          out.set(
            hostname,
            admin || Number(found.owner_id) === owner.id ? { id: Number(found.id) } : { notOwned: true },
          );
        else if (create !== null)
          out.set(hostname, {
            id: Number((await claimDomain(tx, dialect, { hostname, ownerId: owner.id, at: create.at })).id),
          });
      }
      return out;
    },
  };
}
