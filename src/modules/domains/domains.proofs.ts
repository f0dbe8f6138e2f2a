import type { DomainRow } from '../../db/types.js';
import { AppError, notFound } from '../../lib/app-error.js';
import type { Caller } from '../../lib/caller.js';
import type { Clock } from '../../lib/clock.js';
import { findManagedDomain } from './domain-access.js';
import { toEntry, type DomainRegistry } from './domain-registry.js';
import type { DomainChecker } from './domain-verification.js';
import type { DomainChanges, DomainsRepository } from './domains.repository.js';

const RECHECK_EVERY_MS = 24 * 3_600_000;
const RECHECK_BATCH = 50;

export interface DomainProofsDeps {
  domains: Pick<DomainsRepository, 'findById' | 'findByToken' | 'update' | 'dueForCheck' | 'claimCheck'>;
  registry: Pick<DomainRegistry, 'put'>;
  checker: DomainChecker;
  clock: Clock;
}

/** Found, or what each check saw instead. */
type ProofSearch = { found: true } | { found: false; dns: string; http: string };

/** The TXT record first; the HTTP path only when the record does not prove control (either proof will do). */
async function searchForProof(checker: DomainChecker, row: Pick<DomainRow, 'hostname' | 'token'>): Promise<ProofSearch> {
  const txt = await checker.txt(row.hostname, row.token);
  if (txt.ok) return { found: true };
  const web = await checker.http(row.hostname, row.token);
  return web.ok ? { found: true } : { found: false, dns: txt.found, http: web.found };
}

/** Proofs of control (SPEC §19): the first verification, the daily re-check, and this service's HTTP proof. */
export function createDomainProofs(deps: DomainProofsDeps) {
  const { domains, registry, checker, clock } = deps;

  return {
    async verify(id: number, caller: Caller): Promise<DomainRow> {
      const row = await findManagedDomain(domains, id, caller);
      const proof = await searchForProof(checker, row);
      const now = clock.now();
      if (!proof.found) {
        throw new AppError('DOMAIN_NOT_VERIFIED', `Neither proof was found: ${proof.dns}; ${proof.http}`, [
          { field: 'dns', message: proof.dns },
          { field: 'http', message: proof.http },
        ]);
      }
      const updated = await domains.update(id, { verified_at: row.verified_at ?? now, checked_at: now, failing_since: null, check_message: null, updated_at: now }, null);
      if (!updated) throw notFound('Domain');
      registry.put(toEntry(updated));
      return updated;
    },

    /** The daily re-check of verified domains (a job): a failing one records why, and since when. */
    async recheckDue(): Promise<number> {
      const now = clock.now();
      let checked = 0;
      for (const row of await domains.dueForCheck(now - RECHECK_EVERY_MS, RECHECK_BATCH)) {
        if (!(await domains.claimCheck(row.id, row.checked_at, now))) continue; // another instance has it
        checked += 1;
        const proof = await searchForProof(checker, row);
        const changes: DomainChanges = proof.found
          ? { failing_since: null, check_message: null }
          : { failing_since: row.failing_since ?? now, check_message: `${proof.dns}; ${proof.http}`.slice(0, 512) };
        const updated = await domains.update(row.id, changes, null);
        if (updated) registry.put(toEntry(updated));
      }
      return checked;
    },

    /** The verification token's answer, for the host that names it (GET /.well-known/ferry-verification/{token}). */
    async tokenFor(hostname: string, token: string): Promise<string | null> {
      const row = await domains.findByToken(token);
      return row && row.hostname === hostname ? row.token : null;
    },
  };
}
