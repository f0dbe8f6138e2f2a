import { AppError } from '../../lib/app-error.js';
import { isAdmin, keyAllowsDomain, type Caller } from '../../lib/caller.js';
import type { Clock } from '../../lib/clock.js';
import {
  normalizeHostname,
  STOP_AFTER_FAILING_MS,
  SYSTEM_VIEWER,
  type ClaimViewer,
  type DomainDirectory,
} from '../domains/index.js';

export interface LinkDomainsDeps {
  /** the domains module's directory: the registry, and a reload for a domain made on another instance a moment ago */
  registry: Pick<DomainDirectory, 'byIdOf' | 'named' | 'reload' | 'reloadHostname'>;
  publicBaseUrl: string;
  clock: Clock;
}

const domainDetail = (message: string) => [{ field: 'domain', message }];

/** Whose view of a host name a caller has (SPEC §25: a user's own unverified claim is the one their links use). */
export const viewerOf = (caller: Caller | null): ClaimViewer | null =>
  caller ? { userId: caller.userId, admin: isAdmin(caller) } : null;

/** A domain takes its owner's (or an admin's) links, unless its re-checks have failed for 7 days. */
function assertUsableDomain(
  deps: Pick<LinkDomainsDeps, 'registry' | 'clock'>,
  id: number,
  caller: Caller | null,
): void {
  const entry = deps.registry.byIdOf(id)!;
  if (!caller || (!isAdmin(caller) && entry.ownerId !== caller.userId)) {
    throw new AppError(
      'FORBIDDEN',
      "Only the domain's owner or an admin may put links on it",
      domainDetail('is not yours'),
    );
  }
  if (entry.failingSince !== null && deps.clock.now() - entry.failingSince >= STOP_AFTER_FAILING_MS) {
    throw new AppError(
      'DOMAIN_NOT_VERIFIED',
      'This domain takes no new links: its re-checks have failed for 7 days (see the domain record)',
      domainDetail('failed its re-checks'),
    );
  }
}

/**
 * A link's domain as the links module sees it (SPEC §19): the id behind a `domain` name, whether a caller may
 * put links on it, and the short URL it gives a link. Domain id 0 is the default domain (PUBLIC_BASE_URL).
 */
export function createLinkDomains(deps: LinkDomainsDeps) {
  const { registry } = deps;
  const base = new URL(deps.publicBaseUrl);
  const defaultHost = base.hostname.toLowerCase();
  const defaultScheme = base.protocol.slice(0, -1);

  /**
   * The id a `domain` names for `viewer` (domain-claims.ts): 0 for none or the default host, null for a name
   * that is no domain here (or only someone else's unverified claim). A name the registry lacks is looked for
   * once in the database: another instance may have added it a moment ago.
   */
  const lookup = async (
    domain: string | null | undefined,
    viewer: ClaimViewer | null = SYSTEM_VIEWER,
  ): Promise<number | null> => {
    if (domain === undefined || domain === null || domain === '') return 0;
    const hostname = normalizeHostname(domain);
    if (hostname === null) return domain.toLowerCase() === defaultHost ? 0 : null;
    if (hostname === defaultHost) return 0;
    if (!registry.named(hostname, viewer)) await registry.reloadHostname(hostname);
    return registry.named(hostname, viewer)?.id ?? null;
  };

  return {
    idOf: lookup,

    /** The domain a caller may put a link on (its owner or an admin), verified or not, unless it was stopped. */
    async usableBy(domain: string | null | undefined, caller: Caller | null): Promise<number> {
      const id = await lookup(domain, viewerOf(caller));
      if (id === null)
        throw new AppError(
          'VALIDATION_ERROR',
          'Request body is invalid',
          domainDetail('is not a domain of this service'),
        );
      if (!keyAllowsDomain(caller, id))
        throw new AppError(
          'FORBIDDEN',
          'This API key is limited to other domains',
          domainDetail("is not one of the API key's domains"),
        );
      if (id !== 0) assertUsableDomain(deps, id, caller);
      return id;
    },

    /**
     * A list's domain filter (SPEC §19): `domain` (a name that is no domain here has no links), and the domains
     * of an API key limited to some (the caller then sees only theirs).
     */
    async listFilter(
      domain: string | undefined,
      keyDomains: readonly number[] | null,
      viewer: ClaimViewer | null = SYSTEM_VIEWER,
    ): Promise<{ domainId?: number; domainIds?: readonly number[] }> {
      const domainId = domain === undefined ? undefined : ((await lookup(domain, viewer)) ?? -1);
      return { ...(domainId !== undefined ? { domainId } : {}), ...(keyDomains ? { domainIds: keyDomains } : {}) };
    },

    nameOf: (domainId: number): string | null =>
      domainId === 0 ? null : (registry.byIdOf(domainId)?.hostname ?? null),

    shortUrl(link: { domain_id: number; short_code: string }): string {
      if (link.domain_id === 0) return `${deps.publicBaseUrl}/${link.short_code}`;
      const entry = registry.byIdOf(link.domain_id);
      if (!entry) return `${deps.publicBaseUrl}/${link.short_code}`;
      return `${entry.scheme ?? defaultScheme}://${entry.hostname}/${link.short_code}`;
    },

    /** Loads domains another instance made a moment ago, so that every row maps to its name. */
    async ensureKnown(rows: ReadonlyArray<{ domain_id: number }>): Promise<void> {
      for (const id of new Set(rows.map((r) => r.domain_id)))
        if (id !== 0 && !registry.byIdOf(id)) await registry.reload(id);
    },
  };
}

export type LinkDomains = ReturnType<typeof createLinkDomains>;
