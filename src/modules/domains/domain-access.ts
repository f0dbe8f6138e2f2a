import type { DomainRow } from '../../db/types.js';
import { forbidden, notFound } from '../../lib/app-error.js';
import { isAdmin, keyAllowsDomain, type Caller } from '../../lib/caller.js';
import type { DomainsRepository } from './domains.repository.js';

/** The domain, when the caller may manage it: its owner or an admin, through an API key that covers it. */
export async function findManagedDomain(
  domains: Pick<DomainsRepository, 'findById'>,
  id: number,
  caller: Caller,
): Promise<DomainRow> {
  const row = await domains.findById(id);
  if (!row) throw notFound('Domain');
  if (!isAdmin(caller) && row.owner_id !== caller.userId)
    throw forbidden('Only the owner or an admin may manage this domain');
  if (!keyAllowsDomain(caller, row.id)) throw forbidden('This API key is limited to other domains');
  return row;
}
