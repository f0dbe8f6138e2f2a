import type { Transaction } from 'kysely';
import type { Database } from '../../db/types.js';
import {
  checkImportedLink,
  type CheckedLink,
  type ImportedLink,
  type ImportedLinkCheck,
  type TargetCheck,
} from './imported-link-rules.js';
import type { BatchLinkRow, DomainCode, LinkBatchRepository } from './link-batch.repository.js';
import { NO_VISIT_CACHE, type VisitCache } from './visit-cache.js';
import type { Config } from '../../config.js';
import type { Storage } from '../../db/database.js';
import type { Clock } from '../../lib/clock.js';
import type { HostBlocklist } from '../../lib/host-blocklist.js';
import { createLinkBatchRepository } from './link-batch.repository.js';
import type { PublicLinkOf } from './link-rows.js';
import { createTargetRules } from './link-input.js';
import { generateCode, isReservedCode } from './short-code.js';

type Tx = Transaction<Database>;

/** Attempts at a free generated code for every link of a batch. */
const CODE_ATTEMPTS = 8;

/** A checked link placed on its domain (0: the default domain), for its owner. */
export interface NewImportedLink {
  link: CheckedLink;
  domainId: number;
  userId: number;
  /** click_count to start from: what the source counted beyond the visit records it brings */
  clickCount: number;
}

/** Each link's code: its own (claimed free on its domain in this transaction), or a generated one, with retries. */
async function claimAll(
  deps: { batch: Pick<LinkBatchRepository, 'claimCodes'>; generate: () => string },
  tx: Tx,
  links: readonly NewImportedLink[],
): Promise<string[]> {
  const { batch, generate } = deps;
  const codes: Array<string | null> = links.map(() => null);
  const claim = async (wanted: ReadonlyArray<string | null>): Promise<void> => {
    for (const domainId of new Set(links.map((l) => l.domainId))) {
      const ofDomain = wanted.filter((c, i): c is string => c !== null && links[i]!.domainId === domainId);
      const got = await batch.claimCodes(tx, domainId, ofDomain);
      wanted.forEach((c, i) => {
        if (c !== null && links[i]!.domainId === domainId && got.has(c)) codes[i] = c;
      });
    }
  };
  const own = links.map((l) => l.link.shortCode);
  await claim(own);
  if (own.some((c, i) => c !== null && codes[i] === null))
    throw new Error('a code was taken while the import ran; run it again to go on');
  const fresh = (): string | null => {
    const c = generate();
    return isReservedCode(c) ? null : c;
  };
  for (let attempt = 0; codes.some((c) => c === null); attempt += 1) {
    if (attempt >= CODE_ATTEMPTS) throw new Error(`no free short code after ${CODE_ATTEMPTS} attempts`);
    await claim(codes.map((c) => (c === null ? fresh() : null)));
  }
  return codes as string[];
}

/**
 * The links module's one way in for links made elsewhere (SPEC §20, §25): an importer plans items from its
 * source, and the links module checks them by the API's own rules and writes them many at a time. Codes and
 * aliases are claimed in the same namespace as the API's (link_codes), creations are announced as the API's
 * are, and the cache of this instance forgets its "missing" answers for the new names once they are committed.
 */
export function createLinkImports(deps: {
  batch: LinkBatchRepository;
  checkTarget: TargetCheck;
  cache: VisitCache;
  generate: () => string;
  clock: Clock;
}) {
  const { batch, checkTarget, cache, clock } = deps;
  return {
    /** The API's rules for one link (SPEC §25): what it becomes, or the error code and field that refuse it. */
    check: (link: ImportedLink): ImportedLinkCheck => checkImportedLink(link, checkTarget),

    /** Which of these names are issued already on their domains (live or retired): "domainId/name" keys. */
    takenNames: (tx: Tx, names: readonly DomainCode[]) => batch.takenCodes(tx, names),

    /** Creates the links in the caller's transaction; each one's id and code, in the order given. */
    async create(tx: Tx, links: readonly NewImportedLink[]): Promise<Array<{ id: number; code: string }>> {
      if (links.length === 0) return [];
      const now = clock.now();
      const codes = await claimAll(deps, tx, links);
      const rows: BatchLinkRow[] = links.map(({ link, domainId, userId, clickCount }, i) => ({
        short_code: codes[i]!,
        domain_id: domainId,
        user_id: userId,
        original_url: link.originalUrl,
        expires_at: link.expiresAt,
        created_at: link.createdAt ?? now,
        updated_at: now,
        max_visits: link.maxVisits,
        forward_query: link.forwardQuery ? 1 : 0,
        password_hash: null,
        tags: link.tags,
        title: link.title,
        aliases: link.aliases.join(','),
        rules: link.rules,
        click_count: clickCount,
      }));
      const ids = await batch.insertLinks(tx, rows);
      return rows.map((r) => ({ id: ids.get(`${r.domain_id}/${r.short_code}`)!, code: r.short_code }));
    },

    /** Adds to a link's click count what the source counted beyond its visit records (never lowers it). */
    raiseClickCount: (tx: Tx, linkId: number, count: number) => batch.raiseClickCount(tx, linkId, count),

    /** Adds visits a source only counts (Kutt, Dub) to a link's click count. */
    addClicks: (tx: Tx, linkId: number, count: number) => batch.addClicks(tx, linkId, count),

    /** After the transaction committed: this instance's cache forgets what it held for these names. */
    committed(names: readonly DomainCode[]): void {
      for (const n of names) cache.forgetNames(n.domainId, [n.code]);
    },
  };
}

export type LinkImports = ReturnType<typeof createLinkImports>;

/** The importers' way in with this instance's target rules: where it is served, and the hosts it blocks. */
export function linkImportsFor(deps: {
  config: Pick<Config, 'publicBaseUrl' | 'port'>;
  storage: Pick<Storage, 'dialect'>;
  blockedHosts: HostBlocklist;
  /** this instance's redirect cache; none outside a server (the CLI: servers hear of new names by the change feed) */
  cache?: VisitCache;
  clock: Clock;
  /** the link as the API shows it, in its `link.created` event (SPEC §22) */
  publicLink: PublicLinkOf;
}): LinkImports {
  const { config, blockedHosts } = deps;
  return createLinkImports({
    batch: createLinkBatchRepository({ dialect: deps.storage.dialect, publicLink: deps.publicLink }),
    checkTarget: createTargetRules({ publicBaseUrl: config.publicBaseUrl, listenPort: config.port, blockedHosts })
      .checkTarget,
    cache: deps.cache ?? NO_VISIT_CACHE,
    generate: () => generateCode(),
    clock: deps.clock,
  });
}
