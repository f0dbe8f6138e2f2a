import { compileRules } from '../links/index.js';
import { ROUTING_BYTES_PER_JSON_CHAR, type RedirectTarget, type VisitRules } from './link-cache.js';
import type { CodeLookup } from './redirect.repository.js';
import { previewOf } from '../links/index.js';

/**
 * What a name (a code or an alias, SPEC §20) resolves to on the redirect path, from the one lookup of
 * link_codes joined to links.
 */
function rulesOf(found: CodeLookup): VisitRules | null {
  // Compiled here, once per cache entry (SPEC §21): a visit only evaluates.
  const routing = found.rules == null ? null : compileRules(found.rules);
  return found.max_visits === null && !found.forward_query && found.password_hash === null && routing === null
    ? null
    : {
        maxVisits: found.max_visits === null ? null : Number(found.max_visits),
        forwardQuery: Boolean(found.forward_query),
        passwordHash: found.password_hash,
        routing,
        routingBytes: found.rules == null ? 0 : found.rules.length * ROUTING_BYTES_PER_JSON_CHAR,
      };
}

// One object each for every name of these kinds: a cached miss keeps no target of its own.
const DISABLED: RedirectTarget = { kind: 'disabled' };
const EXPIRED: RedirectTarget = { kind: 'expired' };
const MISSING: RedirectTarget = { kind: 'missing' };

/**
 * `name`: the code or alias visited. A tombstone never redirects, even where it still names a live link (an
 * alias removed from it).
 */
export const toTarget = (name: string, found: CodeLookup | undefined): RedirectTarget => {
  if (found?.id != null && found.retired_reason === null && found.disabled_at != null) return DISABLED;
  if (found?.id != null && found.retired_reason === null && found.original_url != null && found.short_code != null) {
    const alias = found.short_code === name ? null : name;
    return {
      kind: 'link',
      id: found.id,
      code: found.short_code,
      alias,
      url: found.original_url,
      expiresAt: found.expires_at,
      rules: rulesOf(found),
      preview: previewOf(found.preview ?? null),
      broken: found.health_status === 'broken' ? { fallbackUrl: found.fallback_url ?? null } : null,
    };
  }
  return found?.retired_reason === 'expired' ? EXPIRED : MISSING;
};
