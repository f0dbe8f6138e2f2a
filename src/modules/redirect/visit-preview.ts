import type { DomainEntry } from '../domains/index.js';
import type { RedirectTarget } from './link-cache.js';
import { isUnfurler, previewPage } from './preview-page.js';
import type { VisitContext } from './visit-context.js';

/** Every visit must reach the service to be counted (SPEC §6): no answer that depends on the visitor is cached. */
export const REDIRECT_CACHE_CONTROL = 'private, no-store';

type LinkTarget = Extract<RedirectTarget, { kind: 'link' }>;
type PreviewDomain = Pick<DomainEntry, 'hostname' | 'scheme'>;
interface PreviewVisit {
  method: string;
  context: Pick<VisitContext, 'agent' | 'userAgent'>;
}

/**
 * SPEC §21: an unfurler's visit to a link with a preview, which would have been redirected: 200 with the page of
 * Open Graph and Twitter card tags (preview-page.ts), its click recorded as a bot's (not for HEAD).
 */
export interface PreviewAnswer {
  kind: 'preview';
  html: string;
  headers: { 'cache-control': string; vary: string };
  link: LinkTarget;
  /** the verified domain the host named (SPEC §19); undefined: the default domain */
  domain: string | undefined;
}

/**
 * An unfurler's answer instead of the redirect (SPEC §21), for a link with a preview whose visit passed every
 * check (a password, a visit limit: the refusals stay as they are, so no preview leaks past them); null for
 * everyone else. The user agent is read only for a link that has a preview.
 */
export function createPreviews(publicBaseUrl: string) {
  const defaultScheme = new URL(publicBaseUrl).protocol.slice(0, -1);
  const shortUrl = (target: LinkTarget, domain: PreviewDomain | undefined): string =>
    domain === undefined
      ? `${publicBaseUrl}/${target.code}`
      : `${domain.scheme ?? defaultScheme}://${domain.hostname}/${target.code}`;
  return (target: LinkTarget, visit: PreviewVisit, domain: PreviewDomain | undefined): PreviewAnswer | null => {
    if (target.preview === null || visit.method === 'POST') return null;
    if (!isUnfurler(visit.context.userAgent) || !visit.context.agent.isBot) return null;
    return {
      kind: 'preview',
      html: previewPage(target.preview, shortUrl(target, domain)),
      headers: { 'cache-control': REDIRECT_CACHE_CONTROL, vary: 'User-Agent' },
      link: target,
      domain: domain?.hostname,
    };
  };
}
