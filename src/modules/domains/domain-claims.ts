import { sql, type Insertable, type Kysely, type Transaction } from 'kysely';
import type { Dialect } from '../../db/dialect.js';
import type { Database, DomainRow, DomainsTable } from '../../db/types.js';
import { recordEvent } from '../../db/outbox.js';
import { AppError } from '../../lib/app-error.js';
import { randomAlphanumeric } from '../../lib/random-text.js';

type Db = Kysely<Database> | Transaction<Database>;

/**
 * Claims of a host name (SPEC §25 "Nobody can squat a domain"): while a name is unverified, several users may
 * each hold a claim of it (a domain row of their own, with its own token); the first to verify owns the name
 * and the other claims are removed. So a host name names a different domain for different people: this file
 * says which, once, for the registry in memory and for the queries of other modules.
 */

/** Who is asking what a host name names: a user (an admin or not), or the system (the CLI's moderation). */
export interface ClaimViewer {
  userId: number | null;
  admin: boolean;
}

/** The system's view (the CLI, an admin's moderation): any claim, as an admin's. */
export const SYSTEM_VIEWER: ClaimViewer = { userId: null, admin: true };

/** A claim as the rule needs it (a registry entry or a row). */
export interface Claim {
  id: number;
  ownerId: number | null;
  verified: boolean;
}

/**
 * The domain a host name names for `viewer`: the verified one when there is one (whoever owns it: the caller
 * then learns it is not theirs); else the viewer's own claim; else, for an admin or the system, the oldest
 * claim. Anyone else's unverified claim is invisible: to a stranger the name is no domain here yet.
 */
export function claimNamedFor<T extends Claim>(claims: readonly T[], viewer: ClaimViewer | null): T | undefined {
  const verified = claims.find((c) => c.verified);
  if (verified) return verified;
  if (viewer === null) return undefined;
  const own = viewer.userId === null ? undefined : claims.find((c) => c.ownerId === viewer.userId);
  if (own || !viewer.admin) return own;
  return claims.reduce<T | undefined>(
    (oldest, c) => (oldest === undefined || c.id < oldest.id ? c : oldest),
    undefined,
  );
}

const asClaim = (row: DomainRow) => ({ id: row.id, ownerId: row.owner_id, verified: row.verified_at !== null, row });

/** Every claim of a host name (stored lower case), verified or not. */
export async function claimsOf(db: Db, hostname: string): Promise<DomainRow[]> {
  return db.selectFrom('domains').selectAll().where('hostname', '=', hostname).orderBy('id').execute();
}

/**
 * For other modules (the importer): the domain with this host name that `viewer` may put links on — the
 * verified one, else their own claim, else (an admin) the oldest claim — or undefined. Whether the viewer may
 * use a verified domain someone else owns is the caller's rule (an admin may, SPEC §19).
 */
export async function findDomainFor(db: Db, hostname: string, viewer: ClaimViewer): Promise<DomainRow | undefined> {
  return claimNamedFor((await claimsOf(db, hostname)).map(asClaim), viewer)?.row;
}

export const DOMAIN_TOKEN_LENGTH = 32;

/** A new claim's row: unverified, with a token of its own. */
export const newClaimRow = (hostname: string, ownerId: number, at: number): Insertable<DomainsTable> => ({
  hostname,
  owner_id: ownerId,
  token: randomAlphanumeric(DOMAIN_TOKEN_LENGTH),
  verified_at: null,
  scheme: null,
  root_redirect: null,
  not_found_redirect: null,
  expired_redirect: null,
  checked_at: null,
  failing_since: null,
  check_message: null,
  created_at: at,
  updated_at: at,
});

/**
 * Inserts a claim (in the caller's transaction; a second claim of one owner, or a second verified one, is
 * refused by the indexes). It starts with the codes retired on its name before (SPEC §25): those of a deleted
 * verified domain, and those of the owner's own earlier claim (retireDomainCodes).
 */
export async function insertClaim(tx: Db, row: Insertable<DomainsTable>): Promise<DomainRow> {
  const created = await tx.insertInto('domains').values(row).returningAll().executeTakeFirstOrThrow();
  await tx
    .insertInto('link_codes')
    .columns(['domain_id', 'code', 'link_id', 'retired_at', 'retired_reason'])
    .expression((eb) =>
      eb
        .selectFrom('retired_domain_codes')
        .select([sql.lit(Number(created.id)).as('domain_id'), 'code', 'link_id', 'retired_at', 'retired_reason'])
        .where('hostname', '=', created.hostname)
        .where('scope', 'in', [0, created.owner_id ?? 0]),
    )
    .onConflict((oc) => oc.doNothing())
    .execute();
  return created;
}

/**
 * Keeps every code a domain about to be deleted issued (its tombstones, and its live codes as deleted ones) by
 * host name, for the next claim of it: a verified domain's bind every later claim (they served visits), an
 * unverified claim's only its owner's (they never did; a squatter's claim must not fill the real owner's
 * namespace). Then its rows of link_codes go.
 */
export type RetiringDomain = Pick<DomainRow, 'id' | 'hostname' | 'owner_id' | 'verified_at'>;

export async function retireDomainCodes(tx: Db, domain: RetiringDomain, at: number): Promise<void> {
  const scope = domain.verified_at !== null ? 0 : domain.owner_id;
  if (scope !== null) {
    await tx
      .insertInto('retired_domain_codes')
      .columns(['hostname', 'scope', 'code', 'link_id', 'retired_at', 'retired_reason'])
      .expression((eb) =>
        eb
          .selectFrom('link_codes')
          .select([
            sql.lit(domain.hostname).as('hostname'),
            sql.lit(Number(scope)).as('scope'),
            'code',
            'link_id',
            sql<number>`coalesce(retired_at, ${at})`.as('retired_at'),
            sql<'deleted'>`coalesce(retired_reason, 'deleted')`.as('retired_reason'),
          ])
          .where('domain_id', '=', domain.id),
      )
      .onConflict((oc) => oc.doNothing())
      .execute();
  }
  await tx.deleteFrom('link_codes').where('domain_id', '=', domain.id).execute();
}

const hostnameDetail = (message: string) => [{ field: 'hostname', message }];
export const hostnameTaken = (): AppError =>
  new AppError(
    'CONFLICT',
    'This host name is a verified domain of this service',
    hostnameDetail('is taken: it was verified by its owner'),
  );
export const alreadyClaimed = (): AppError =>
  new AppError('CONFLICT', 'You have claimed this host name already', hostnameDetail('is one of your domains already'));

/**
 * For other modules (the importer): a new claim of `hostname` for `ownerId`, in the caller's transaction,
 * announced to every instance's registry. CONFLICT when the name is verified, or the owner holds a claim of
 * it already (look with findDomainFor first).
 */
export async function claimDomain(
  tx: Db,
  dialect: Pick<Dialect, 'notify'>,
  claim: { hostname: string; ownerId: number; at: number },
): Promise<DomainRow> {
  const existing = await claimsOf(tx, claim.hostname);
  if (existing.some((c) => c.verified_at !== null)) throw hostnameTaken();
  if (existing.some((c) => c.owner_id === claim.ownerId)) throw alreadyClaimed();
  const row = await insertClaim(tx, newClaimRow(claim.hostname, claim.ownerId, claim.at));
  await recordEvent(tx, dialect, { type: 'domain.created', data: { domain_id: Number(row.id) } }, { at: claim.at });
  return row;
}
