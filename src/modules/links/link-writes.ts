import { auditActorOf } from '../../db/audit-log.js';
import type { Transaction } from 'kysely';
import type { Dialect } from '../../db/dialect.js';
import type { Database, LinkRow } from '../../db/types.js';
import { AppError, notFound } from '../../lib/app-error.js';
import type { Caller } from '../../lib/caller.js';
import type { Clock } from '../../lib/clock.js';
import { assertIfMatch } from '../../lib/etag.js';
import { assertMayManage } from './link-access.js';
import type { LinkDomains } from './link-domains.js';
import type { LinkDraft, LinkInput } from './link-input.js';
import { moderationChanges } from './link-moderation.js';
import type { FindLiveLink } from './link-reads.js';
import { AliasTakenError, namesOf, type LinksRepository } from './links.repository.js';
import type { LinkCreate, LinkPatch } from './links.schemas.js';
import type { VisitCache } from './visit-cache.js';
import { isReservedCode } from './short-code.js';

/** Attempts before giving up on random codes. At 62^8 codes a second collision in a row is already ~1e-17. */
const GENERATE_ATTEMPTS = 8;
const SWEEP_BATCH = 500;

/** A link's ETag follows its version, so If-Match is checked without serialising (like users'). */
export const linkEtag = (row: Pick<LinkRow, 'id' | 'version'>): string => `"link-${row.id}-v${row.version}"`;

export interface LinkWriteOptions {
  caller: Caller | null;
  ifMatch?: string | undefined;
  /** the request's `?domain=` (absent: the default domain) */
  domain?: string | undefined;
}

/** A taken alias answers as a taken custom code does (SPEC §6, §20): 409 CONFLICT. */
const aliasTaken = (err: AliasTakenError): AppError =>
  new AppError('CONFLICT', 'This alias is taken', [
    {
      field: 'aliases',
      message: `${JSON.stringify(err.alias)} is already taken on this domain (by a code or an alias, or it was and stays retired)`,
    },
  ]);

/** Every name of the link leaves this instance's cache, found or "missing" alike. */
const dropCachedNames = (cache: VisitCache, row: Pick<LinkRow, 'domain_id' | 'short_code' | 'aliases'>): void => {
  cache.forgetNames(row.domain_id, namesOf(row));
};

/** What creating and editing a link both need beside their repository method and their part of the input. */
interface LinkWriteContext {
  dialect: Pick<Dialect, 'isUniqueViolation'>;
  clock: Clock;
  cache: VisitCache;
  domains: Pick<LinkDomains, 'usableBy'>;
}

export function createLinkCreation(
  deps: LinkWriteContext & {
    links: Pick<LinksRepository, 'insert'>;
    input: Pick<LinkInput, 'prepare'>;
    /** the code source; tests pass a rigged one to force collisions */
    generate: () => string;
    assertMayCreate: (caller: Caller | null) => void;
  },
) {
  const { links, dialect, clock, cache, domains, input, generate, assertMayCreate } = deps;

  /**
   * A custom code is tried once (taken: 409). A random code is retried on collision; the unique index of
   * link_codes decides (never check-then-insert), and tombstoned codes are in that index too.
   */
  async function insertDraft(draft: LinkDraft, caller: Caller | null, tx?: Transaction<Database>): Promise<LinkRow> {
    const now = clock.now();
    const domainId = await domains.usableBy(draft.domain, caller);
    const row = {
      ...draft.fields,
      domain_id: domainId,
      user_id: caller?.userId ?? null,
      created_at: now,
      updated_at: now,
    };
    for (let attempt = 1; ; attempt += 1) {
      if (attempt > GENERATE_ATTEMPTS) throw new Error(`no free short code after ${GENERATE_ATTEMPTS} attempts`);
      const code = draft.shortCode ?? generate();
      if (draft.shortCode === undefined && isReservedCode(code)) continue;
      try {
        const created = await links.insert({ ...row, short_code: code }, tx);
        dropCachedNames(cache, created); // drop cached "missing" answers for its names
        return created;
      } catch (err) {
        if (err instanceof AliasTakenError) throw aliasTaken(err);
        if (!dialect.isUniqueViolation(err)) throw err;
        if (draft.shortCode !== undefined) {
          throw new AppError('CONFLICT', 'This short code is taken', [
            { field: 'short_code', message: 'is already taken' },
          ]);
        }
      }
    }
  }

  /**
   * Checks the caller's right to create and a creation body, and hashes its password, outside any
   * transaction (scrypt takes tens of milliseconds on the thread pool; a transaction held meanwhile would
   * hold the embedded engine's one connection too).
   */
  function prepare(body: LinkCreate, caller: Caller | null): Promise<LinkDraft> {
    assertMayCreate(caller);
    return input.prepare(body, clock.now(), caller === null);
  }

  return {
    prepare,
    async create(body: LinkCreate | LinkDraft, caller: Caller | null, tx?: Transaction<Database>): Promise<LinkRow> {
      const draft = 'prepared' in body ? body : await prepare(body, caller);
      return insertDraft(draft, caller, tx);
    },
  };
}

export function createLinkEditing(
  deps: LinkWriteContext & {
    links: Pick<LinksRepository, 'update'>;
    input: Pick<LinkInput, 'changes'>;
    findLive: FindLiveLink;
  },
) {
  const { links, dialect, clock, cache, domains, input, findLive } = deps;
  return {
    /**
     * PATCH (JSON merge patch, SPEC §13; `disabled` by admins only, SPEC §18). With If-Match the update is conditional on the version read, so a
     * change that lands in between is a 412, never a lost update. The cache entry is dropped before the
     * answer: from then on this instance redirects to the new target (others within a second, see
     * infra/outbox-feed.ts).
     */
    async patch(code: string, body: LinkPatch, opts: LinkWriteOptions): Promise<LinkRow> {
      const row = await findLive(code, opts.domain, opts.caller);
      assertMayManage(row, opts.caller);
      assertIfMatch(opts.ifMatch, linkEtag(row));
      const moderation = moderationChanges(row, body, opts.caller, clock.now());
      const changes = { ...(await input.changes(row, body, clock.now())), ...moderation };
      if (body.domain !== undefined) {
        const domainId = await domains.usableBy(body.domain ?? undefined, opts.caller);
        if (domainId !== row.domain_id) changes.domain_id = domainId;
      }
      if (Object.keys(changes).length === 0) return row; // nothing to merge: no new version
      const updated = await links
        .update(row, changes, opts.ifMatch === undefined ? null : row.version, clock.now(), auditActorOf(opts.caller))
        .catch((err: unknown) => {
          if (err instanceof AliasTakenError) throw aliasTaken(err);
          if (!dialect.isUniqueViolation(err)) throw err;
          throw new AppError('CONFLICT', 'This short code is taken on that domain', [
            { field: 'domain', message: 'already has a link (or had one) with this code' },
          ]);
        });
      dropCachedNames(cache, row);
      if (updated) dropCachedNames(cache, updated);
      if (updated) return updated;
      const now = await findLive(code, opts.domain, opts.caller); // gone, or changed since it was read
      throw new AppError('PRECONDITION_FAILED', 'If-Match does not match the current representation', [
        { field: 'If-Match', message: `the current ETag is ${linkEtag(now)}` },
      ]);
    },
  };
}

/** A link's end: deleted by its owner or an admin, or expired and swept. */
export function createLinkRetirement(deps: {
  links: Pick<LinksRepository, 'retire' | 'findExpired'>;
  clock: Clock;
  cache: VisitCache;
  findLive: FindLiveLink;
}) {
  const { links, clock, cache, findLive } = deps;
  return {
    async remove(code: string, caller: Caller | null, domain?: string): Promise<void> {
      const row = await findLive(code, domain, caller);
      assertMayManage(row, caller);
      const removed = await links.retire(row, 'deleted', clock.now());
      dropCachedNames(cache, row);
      if (!removed) throw notFound('Link');
    },

    /** Deletes expired links and leaves their codes as tombstones (410, never reissued). */
    async sweepExpired(): Promise<number> {
      let swept = 0;
      for (;;) {
        const now = clock.now();
        const expired = await links.findExpired(now, SWEEP_BATCH);
        for (const row of expired) {
          if (await links.retire(row, 'expired', now)) swept += 1;
          dropCachedNames(cache, row);
        }
        if (expired.length < SWEEP_BATCH) return swept;
      }
    },
  };
}
