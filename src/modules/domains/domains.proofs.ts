import { auditActorOf } from '../../db/audit-log.js';
import type { Dialect } from '../../db/dialect.js';
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
/** Re-checks at once: a slow domain (up to its 10 s deadline) holds one of these, never the others (SPEC §25). */
const RECHECK_CONCURRENCY = 8;

export interface DomainProofsDeps {
  domains: Pick<
    DomainsRepository,
    'findById' | 'findByToken' | 'update' | 'markVerified' | 'dueForCheck' | 'claimCheck'
  >;
  registry: Pick<DomainRegistry, 'put' | 'remove'>;
  dialect: Pick<Dialect, 'isUniqueViolation'>;
  checker: DomainChecker;
  clock: Clock;
}

/** Runs `work` on every item, at most `limit` at a time; every item is tried, the first failure is thrown after. */
async function forEachBounded<T>(items: readonly T[], limit: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const failures: unknown[] = [];
  const worker = async () => {
    while (next < items.length) {
      const item = items[next++]!;
      await work(item).catch((err: unknown) => {
        failures.push(err);
      });
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  if (failures.length) throw failures[0];
}

/** SPEC §23: the audit log's entry for a domain verified by its owner (or an admin). */
const verifiedAudit = (row: DomainRow, caller: Caller, at: number) => ({
  action: 'domain.verified' as const,
  actor: auditActorOf(caller),
  target: { type: 'domain', id: row.id },
  details: { hostname: row.hostname },
  at,
});

/** Proofs of control (SPEC §19): the first verification, the daily re-check, and this service's HTTP proof. */
export function createDomainProofs(deps: DomainProofsDeps) {
  const { domains, registry, checker, clock, dialect } = deps;

  return {
    async verify(id: number, caller: Caller): Promise<DomainRow> {
      const row = await findManagedDomain(domains, id, caller);
      const proof = await checker.prove(row.hostname, row.token);
      const now = clock.now();
      if (!proof.found) {
        throw new AppError('DOMAIN_NOT_VERIFIED', `Neither proof was found: ${proof.dns}; ${proof.http}`, [
          { field: 'dns', message: proof.dns },
          { field: 'http', message: proof.http },
        ]);
      }
      const changes = {
        verified_at: row.verified_at ?? now,
        checked_at: now,
        failing_since: null,
        check_message: null,
        updated_at: now,
      };
      const verified = await domains
        .markVerified(id, changes, verifiedAudit(row, caller, now))
        .catch((err: unknown) => {
          if (!dialect.isUniqueViolation(err)) throw err;
          const detail = { field: 'hostname', message: 'is a verified domain of another user' };
          throw new AppError('CONFLICT', 'Another user verified this host name first', [detail]);
        });
      if (!verified) throw notFound('Domain'); // removed meanwhile: another claim of the name was verified
      registry.put(toEntry(verified.row));
      for (const id of verified.removed) registry.remove(id);
      return verified.row;
    },

    /**
     * The daily re-check of verified domains (a job): a failing one records why, and since when. The checks run
     * side by side (RECHECK_CONCURRENCY), so one domain whose server never answers does not delay the rest.
     */
    async recheckDue(): Promise<number> {
      const now = clock.now();
      let checked = 0;
      const due = await domains.dueForCheck(now - RECHECK_EVERY_MS, RECHECK_BATCH);
      await forEachBounded(due, RECHECK_CONCURRENCY, async (row) => {
        if (!(await domains.claimCheck(row.id, row.checked_at, now))) return; // another instance has it
        checked += 1;
        const proof = await checker.prove(row.hostname, row.token);
        const changes: DomainChanges = proof.found
          ? { failing_since: null, check_message: null }
          : { failing_since: row.failing_since ?? now, check_message: `${proof.dns}; ${proof.http}`.slice(0, 512) };
        // SPEC §22: `domain.failing` when a re-check first fails, `domain.verified` when a failing one passes again.
        const turned = proof.found ? row.failing_since !== null : row.failing_since === null;
        const type = proof.found ? 'domain.verified' : 'domain.failing';
        const updated = await domains.update(row.id, changes, null, turned ? { type, at: now } : undefined);
        if (updated) registry.put(toEntry(updated));
      });
      return checked;
    },

    /**
     * The verification token's answer (GET /.well-known/ferry-verification/{token}): only a verified domain's,
     * on its own host, for its re-check. An unverified claim's token is never answered here (SPEC §25): pointing
     * a name at Ferry must prove nothing, or a squatter's claim would verify the moment the owner did that.
     */
    async tokenFor(hostname: string, token: string): Promise<string | null> {
      const row = await domains.findByToken(token);
      return row && row.verified_at !== null && row.hostname === hostname ? row.token : null;
    },
  };
}
