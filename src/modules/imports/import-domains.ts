import type { Kysely, Transaction } from 'kysely';
import type { Dialect } from '../../db/dialect.js';
import type { Database } from '../../db/types.js';
import { domainChangeMessage, LINK_CHANGES_CHANNEL } from '../../infra/pg-link-cache-bus.js';
import { randomAlphanumeric } from '../../lib/random-text.js';

type Tx = Transaction<Database>;

/** As the domains module makes them (the TXT record's value and the HTTP path). */
const DOMAIN_TOKEN_LENGTH = 32;

/** Who the imported links will belong to: the owner's id, and whether an admin (who may use any domain, §19). */
export interface ImportOwner {
  id: number;
  role: 'user' | 'admin';
}

/** A host name's domain for an import's owner: its id, or why the owner may not put links on it. */
export type ImportDomain = { id: number } | { notOwned: true };

/**
 * The domains an import puts links on (SPEC §19, §25): a link goes on a domain only when the import's owner owns
 * it, or when the owner is an admin; another user's domain fails the item DOMAIN_NOT_OWNED. A host name that is
 * no domain yet becomes the owner's own claim (unverified: it serves no visit until its owner verifies it), made
 * and announced as one made through the API.
 */
export function createImportDomains(deps: { dialect: Pick<Dialect, 'notify'> }) {
  const { dialect } = deps;
  return {
    async domainsFor(tx: Tx | Kysely<Database>, hostnames: readonly string[], owner: ImportOwner, create: { at: number } | null): Promise<Map<string, ImportDomain>> {
      const out = new Map<string, ImportDomain>();
      if (hostnames.length === 0) return out;
      const rows = await tx.selectFrom('domains').select(['id', 'hostname', 'owner_id']).where('hostname', 'in', [...hostnames]).execute();
      for (const r of rows) {
        out.set(r.hostname, owner.role === 'admin' || Number(r.owner_id) === owner.id ? { id: Number(r.id) } : { notOwned: true });
      }
      if (create === null) return out;
      for (const hostname of hostnames.filter((h) => !out.has(h))) {
        const row = await tx.insertInto('domains').values({
          hostname, owner_id: owner.id, token: randomAlphanumeric(DOMAIN_TOKEN_LENGTH), verified_at: null, scheme: null,
          root_redirect: null, not_found_redirect: null, expired_redirect: null, checked_at: null, failing_since: null, check_message: null,
          created_at: create.at, updated_at: create.at,
        }).returning('id').executeTakeFirstOrThrow();
        out.set(hostname, { id: Number(row.id) });
        await dialect.notify(tx, LINK_CHANGES_CHANNEL, domainChangeMessage('*', Number(row.id)));
      }
      return out;
    },
  };
}
