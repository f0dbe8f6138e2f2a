import type { CompiledRules, LinkPreview } from '../links/index.js';

/*
 * What a name resolves to on the redirect path, what the link cache (link-cache.ts) keeps of it, and what each
 * entry is estimated to cost: the cache is bounded by the sum of these estimates (LINK_CACHE_BYTES), not by a
 * count of entries.
 */

/**
 * What a visit must check before it is redirected (visit-policy.ts). null on a target: none of it, and the
 * fast path may answer the visit.
 */
export interface VisitRules {
  maxVisits: number | null;
  forwardQuery: boolean;
  passwordHash: string | null;
  /** SPEC §21: the link's routing rules, compiled when the link was cached; null: always original_url */
  routing: CompiledRules | null;
  /** what the compiled rules are estimated to hold in memory, for LINK_CACHE_BYTES (entryBytes); absent: 0 */
  routingBytes?: number;
}

/** What a code resolves to on the redirect path. */
export type RedirectTarget =
  /** `code`: the link's code; `alias`: the alias visited (null: the code was) */
  | {
      kind: 'link';
      id: number;
      code: string;
      alias: string | null;
      url: string;
      expiresAt: number | null;
      rules: VisitRules | null;
      /** SPEC §21: what unfurlers are shown instead of the redirect; null: none (the fast path may answer) */
      preview: LinkPreview | null;
      /**
       * SPEC §24: the destination checks found the link broken; `fallbackUrl` is the link's own fallback (null:
       * the domain's broken_redirect, else the destination). null: not broken (ok or unknown)
       */
      broken: { fallbackUrl: string | null } | null;
    }
  /** a tombstone of an expired link: 410 */
  | { kind: 'expired' }
  /** a link an admin disabled: 410 LINK_DISABLED */
  | { kind: 'disabled' }
  /** never issued, or deleted: 404 */
  | { kind: 'missing' };

/**
 * What a plain cached link costs in the heap besides its key's and URL's characters (a link kept as a compact
 * entry, see Entry below): the Map's slot, the entry object, the key's and the URL's string headers. Measured by
 * bench/link-cache-bytes.ts (Node 20, 200,000 and 1,000,000 entries): see docs/performance.md.
 */
export const PLAIN_LINK_BYTES = 120;
/**
 * A link with nothing but a destination visited by another name than its code on the default domain (an alias,
 * or its code on a domain of its own, SPEC §19–§20): a plain link's cost and the entry's two more fields (the
 * link's code and the alias), beside the characters of the code, of the alias where it is not the key, and of the
 * key. Measured by bench/link-cache-bytes.ts `aliases` and `domains`: see docs/performance.md.
 */
export const NAMED_LINK_BYTES = 150;
/**
 * Any other link (rules, a preview, a broken destination, an expiry): the entry and the
 * whole target object with its strings' headers (437–444 bytes were measured when the fast path's memoised
 * answer was kept on the target too; it no longer is).
 */
export const LINK_ENTRY_BYTES = 384;
/** A cached miss (an unknown, expired or disabled code): the Map's slot, the entry, the key's header (one shared target). */
export const MISS_ENTRY_BYTES = 128;

/** a preview's object and its three fields, beside the characters of its strings */
const PREVIEW_BYTES = 96;
/**
 * Compiled rules (SPEC §21) are objects, arrays, sets and parsed CIDRs for what their stored JSON spells out:
 * charged at this many bytes per character of that JSON (an estimate, not yet measured as bench/link-cache-bytes.ts measures a plain link).
 */
export const ROUTING_BYTES_PER_JSON_CHAR = 4;

type LinkTarget = Extract<RedirectTarget, { kind: 'link' }>;

/**
 * A link with nothing but a destination: no rules, preview, broken state or expiry. Most links are; the cache
 * keeps one as its URL and id (and, visited by another name than its code, the code and alias: NamedEntry).
 */
export const isBare = (t: LinkTarget): boolean =>
  t.rules === null && t.preview === null && t.broken === null && t.expiresAt === null;

/** A bare link visited by its own code on the default domain (the key is the code, no alias). */
export const isPlain = (key: string, t: LinkTarget): boolean => t.code === key && t.alias === null && isBare(t);

/** An entry's estimated heap cost: the fixed part plus one byte per character of its strings (one-byte strings). */
export function entryBytes(key: string, target: RedirectTarget): number {
  if (target.kind !== 'link') return MISS_ENTRY_BYTES + key.length;
  if (isPlain(key, target)) return PLAIN_LINK_BYTES + key.length + target.url.length;
  const alias = target.alias === null || target.alias === key ? 0 : target.alias.length;
  if (isBare(target)) return NAMED_LINK_BYTES + key.length + target.code.length + alias + target.url.length;
  const preview = target.preview === null ? 0 : PREVIEW_BYTES + JSON.stringify(target.preview).length;
  return (
    LINK_ENTRY_BYTES +
    key.length +
    target.code.length +
    alias +
    target.url.length +
    (target.rules?.routingBytes ?? 0) +
    preview +
    (target.broken?.fallbackUrl?.length ?? 0)
  );
}

/** An entry's time that never comes (an infinite limit, the only writer; a re-read never asked for). */
export const NEVER = -(2 ** 30);

/**
 * One cached name. A plain link (isPlain) is kept as its URL and id alone, and its target is made again on each
 * hit (a short-lived object that the young generation collects at almost no cost); anything else keeps its
 * target whole. Times are milliseconds since the cache was made, which fit V8's small integers (a double field
 * is a heap number of its own per entry). Issue 37: the cache's heap, and the collector's headroom over it,
 * were most of a million-link instance's RSS; a plain link cost 437 bytes as a target object with its memoised
 * redirect, and costs PLAIN_LINK_BYTES and its characters as this.
 */
export class Entry {
  /** read since it was (re)inserted: spared once by the eviction hand */
  used = false;
  /** when a background re-read of this stale entry was asked for (NEVER: not yet) */
  refreshAskedAt = NEVER;

  constructor(
    /** a plain link's URL, or the whole target */
    readonly value: string | RedirectTarget,
    /** a plain link's id (0 otherwise) */
    readonly id: number,
    /** the entry's limit (NEVER: none) */
    readonly until: number,
    /** entryBytes of it */
    readonly bytes: number,
  ) {}

  isLink(): boolean {
    return typeof this.value === 'string' || this.value.kind === 'link';
  }

  /** `key`: the entry's key (a plain link's code). */
  target(key: string): RedirectTarget {
    const value = this.value;
    if (typeof value !== 'string') return value;
    return bareLink(this.id, key, null, value);
  }
}

/**
 * A bare link (isBare) visited by another name than its code on the default domain: an alias (SPEC §20), or its
 * code on a domain of its own (SPEC §19, where the key is `code@domainId`). Kept as a plain link is, with the
 * link's code and the alias visited beside it: as a whole target it was estimated at 450–470 bytes (251–337
 * measured), where a plain link costs about 170 (docs/performance.md, "What a cached link costs").
 */
export class NamedEntry extends Entry {
  constructor(
    url: string,
    id: number,
    until: number,
    bytes: number,
    /** the link's own code */
    readonly code: string,
    /** the alias visited (null: the code was) */
    readonly alias: string | null,
  ) {
    super(url, id, until, bytes);
  }

  override target(): RedirectTarget {
    return bareLink(this.id, this.code, this.alias, this.value as string);
  }
}

const bareLink = (id: number, code: string, alias: string | null, url: string): RedirectTarget => ({
  kind: 'link',
  id,
  code,
  alias,
  url,
  expiresAt: null,
  rules: null,
  preview: null,
  broken: null,
});
