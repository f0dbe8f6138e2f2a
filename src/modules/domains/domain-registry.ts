import type { DomainRow } from '../../db/types.js';
import { claimNamedFor, type ClaimViewer } from './domain-claims.js';
import { requestHostKey } from './hostname.js';

/** A re-check failing this long stops a domain from taking new links (SPEC §19). */
export const STOP_AFTER_FAILING_MS = 7 * 24 * 3_600_000;

/** What the redirect and the links module need of a domain, held in memory. */
export interface DomainEntry {
  id: number;
  hostname: string;
  ownerId: number | null;
  verified: boolean;
  /** 'http' | 'https', or null: PUBLIC_BASE_URL's */
  scheme: string | null;
  rootRedirect: string | null;
  notFoundRedirect: string | null;
  expiredRedirect: string | null;
  /** SPEC §24: where a broken link without fallback_url sends its visits; null: its destination */
  brokenRedirect: string | null;
  failingSince: number | null;
}

export const toEntry = (row: DomainRow): DomainEntry => ({
  id: row.id,
  hostname: row.hostname,
  ownerId: row.owner_id,
  verified: row.verified_at !== null,
  scheme: row.scheme,
  rootRedirect: row.root_redirect,
  notFoundRedirect: row.not_found_redirect,
  expiredRedirect: row.expired_redirect,
  brokenRedirect: row.broken_redirect,
  failingSince: row.failing_since,
});

/**
 * Every domain, in memory: a visit resolves its host with one Map lookup (no query), and a link's short URL
 * needs its domain's name. Filled at start-up, kept current by this instance's own changes and, across
 * instances, by the outbox feed (infra/outbox-feed.ts: a domain another instance changed is reloaded).
 * A host name may have several claims while it is unverified (SPEC §25); at most one is verified.
 */
export class DomainRegistry {
  private readonly byId = new Map<number, DomainEntry>();
  /** every claim of a host name, verified or not */
  private readonly claims = new Map<string, DomainEntry[]>();
  /** verified domains by host: the only ones that serve visits */
  private readonly served = new Map<string, DomainEntry>();

  put(entry: DomainEntry): void {
    this.remove(entry.id);
    this.byId.set(entry.id, entry);
    this.claims.set(entry.hostname, [...(this.claims.get(entry.hostname) ?? []), entry]);
    if (entry.verified) this.served.set(entry.hostname, entry);
  }

  remove(id: number): void {
    const old = this.byId.get(id);
    if (!old) return;
    this.byId.delete(id);
    const rest = (this.claims.get(old.hostname) ?? []).filter((e) => e !== old);
    if (rest.length) this.claims.set(old.hostname, rest);
    else this.claims.delete(old.hostname);
    if (this.served.get(old.hostname) === old) this.served.delete(old.hostname);
  }

  replaceAll(entries: DomainEntry[]): void {
    this.byId.clear();
    this.claims.clear();
    this.served.clear();
    for (const e of entries) this.put(e);
  }

  byIdOf(id: number): DomainEntry | undefined {
    return this.byId.get(id);
  }

  /** The domain `hostname` names for `viewer` (domain-claims.ts: verified, else their own claim, else for an admin the oldest). */
  named(hostname: string, viewer: ClaimViewer | null): DomainEntry | undefined {
    const claims = this.claims.get(hostname);
    return claims ? claimNamedFor(claims, viewer) : undefined;
  }

  /**
   * The verified domain a visit's host names, or undefined for the default domain (any other host). The raw
   * header is tried first: browsers send the bare lower-case name.
   */
  servedBy(host: string | undefined): DomainEntry | undefined {
    if (host === undefined || this.served.size === 0) return undefined;
    return this.served.get(host) ?? this.served.get(requestHostKey(host));
  }

  size(): number {
    return this.byId.size;
  }
}
