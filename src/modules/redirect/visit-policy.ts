import { normalizeIP } from '@fastify/rate-limit';
import type { AttemptLimiter } from '../../infra/attempt-limiter.js';
import type { DomainDirectory, DomainEntry } from '../domains/index.js';
import type { PasswordHasher } from '../users/index.js';
import type { RedirectTarget } from './link-cache.js';
import type { RedirectResolver } from './redirect-resolver.js';
import type { RedirectQueries, VisitAdmission } from './redirect.repository.js';
import type { VisitContext } from './visit-context.js';
import { isUnfurler, previewPage } from './preview-page.js';

/** What the policy needs to know of one visit. */
export interface Visit {
  /** the code or alias in the path */
  name: string;
  /** the Host the visit came in on: a verified domain's host names that domain, any other the default one */
  host: string | undefined;
  /** GET and POST (the password form) are visits; HEAD only asks what a visit would get */
  method: string;
  /** the raw query string after `?` ('' without one) */
  query: string;
  /** from HTTP Basic or the password form; null when none was sent */
  password: string | null;
  context: Pick<VisitContext, 'ip' | 'agent' | 'userAgent'>;
}

type LinkTarget = Extract<RedirectTarget, { kind: 'link' }>;
type VisitDomain = Pick<
  DomainEntry,
  'id' | 'hostname' | 'scheme' | 'notFoundRedirect' | 'expiredRedirect' | 'rootRedirect'
>;

/** A visit's redirect, whole: the route and the fast path write exactly this. */
export interface Redirect {
  kind: 'redirect';
  url: string;
  status: number;
  headers: { location: string; 'cache-control': string };
  /** the link followed, whose click is recorded (not for HEAD); null: a domain's fallback, which records none */
  link: LinkTarget | null;
  /** the verified domain the host named (SPEC §19); undefined: the default domain */
  domain: string | undefined;
  /** SPEC §21: the routing rule that chose the URL, and the A/B variant; null until rules exist */
  rule: null;
  variant: null;
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

/** A visit that gets no redirect (redirect-refusal.ts answers it). */
export type Refusal =
  | { kind: 'missing' }
  | { kind: 'expired' }
  /** 410 LINK_DISABLED: an admin disabled the link */
  | { kind: 'disabled' }
  /** 410 LINK_EXHAUSTED: max_visits reached */
  | { kind: 'exhausted' }
  /** 401 LINK_PASSWORD_REQUIRED; `wrong`: a password was sent and was not the link's */
  | { kind: 'password'; wrong: boolean }
  /** 429: too many wrong passwords for this link from this address */
  | { kind: 'throttled'; retryAfterSeconds: number };

export type VisitDecision = Redirect | PreviewAnswer | Refusal;

/** Every visit must reach the service to be counted (SPEC §6). */
export const REDIRECT_CACHE_CONTROL = 'private, no-store';
/** A domain's fallback is a temporary redirect: a link made later on that code must be reachable at once. */
export const FALLBACK_STATUS = 302;
/** The password form's answer: See Other, so the browser follows with a GET and a reload does not post again. */
const FORM_STATUS = 303;

/**
 * The target with the visit's query string appended (forward_query, SPEC §13): `?` or `&` as needed, a
 * fragment stays last. Node's parser admits only printable ASCII in a request target; anything else (and
 * `#`) is percent-encoded all the same, so the Location stays a valid header and the query cannot start a
 * fragment.
 */
const percentEncoded = (c: string): string => {
  const code = c.charCodeAt(0);
  return code <= 0xff ? `%${code.toString(16).toUpperCase().padStart(2, '0')}` : '%EF%BF%BD';
};

export function withForwardedQuery(target: string, query: string): string {
  if (query === '') return target;
  const safe = query.replace(/[^\x21\x22\x24-\x7e]/g, percentEncoded);
  const hash = target.indexOf('#');
  const base = hash === -1 ? target : target.slice(0, hash);
  const fragment = hash === -1 ? '' : target.slice(hash);
  const separator = !base.includes('?') ? '?' : base.endsWith('?') || base.endsWith('&') ? '' : '&';
  return `${base}${separator}${safe}${fragment}`;
}

const MISSING: Refusal = { kind: 'missing' };
const EXPIRED: Refusal = { kind: 'expired' };
const DISABLED: Refusal = { kind: 'disabled' };

export interface VisitPolicyDeps {
  resolver: Pick<RedirectResolver, 'resolve' | 'cached'>;
  /** the verified domain a visit's host names (one Map lookup); default: only the default domain */
  domains: Pick<DomainDirectory, 'servedBy'>;
  queries: Pick<RedirectQueries, 'admitVisit' | 'hasVisitsLeft'>;
  passwords: Pick<PasswordHasher, 'verify'>;
  /** wrong password attempts per link and client address */
  attempts: AttemptLimiter;
  /** password hashes per client address (PASSWORD_HASHES_PER_MINUTE, plugins/password-hash-budget.ts); default: none */
  hashBudget?: AttemptLimiter;
  /** REDIRECT_STATUS */
  status: number;
  /** PUBLIC_BASE_URL: a preview's og:url is the link's short URL on its domain */
  publicBaseUrl: string;
}

/** A link's redirect or a domain's fallback, as the visit gets it. */
function redirectTo(url: string, status: number, link: LinkTarget | null, domain: VisitDomain | undefined): Redirect {
  return {
    kind: 'redirect',
    url,
    status,
    headers: { location: url, 'cache-control': REDIRECT_CACHE_CONTROL },
    link,
    domain: domain?.hostname,
    rule: null,
    variant: null,
  };
}

/** A domain's fallback instead of a 404 or 410 (SPEC §19), or the refusal where it has none. */
function fallbackOr(refusal: Refusal, domain: VisitDomain | undefined): VisitDecision {
  if (!domain) return refusal;
  const kind = refusal.kind;
  const url =
    kind === 'missing'
      ? domain.notFoundRedirect
      : kind === 'expired' || kind === 'exhausted'
        ? domain.expiredRedirect
        : null;
  return url === null ? refusal : redirectTo(url, FALLBACK_STATUS, null, domain);
}

/** A password is checked first: a wrong one counts against this link and address. null: the password is right. */
function createPasswordCheck(deps: Pick<VisitPolicyDeps, 'passwords' | 'attempts' | 'hashBudget'>) {
  const { passwords, attempts } = deps;
  return async (linkId: number, hash: string, visit: Visit): Promise<Refusal | null> => {
    if (visit.password === null) return { kind: 'password', wrong: false };
    const address = normalizeIP(visit.context.ip ?? '');
    // The check is a hash from the address's budget (SPEC §17), right or wrong.
    const overBudget = (await deps.hashBudget?.take(`ip:${address}`)) ?? null;
    if (overBudget !== null) return { kind: 'throttled', retryAfterSeconds: overBudget };
    const key = `${linkId}:${address}`;
    const retryAfterSeconds = await attempts.take(key);
    if (retryAfterSeconds !== null) return { kind: 'throttled', retryAfterSeconds };
    if (!(await passwords.verify(visit.password, hash))) return { kind: 'password', wrong: true };
    await attempts.refund(key);
    return null;
  };
}

/**
 * A link's verdict for one visit: the URL to send it to, or the refusal. An ordinary link is answered
 * synchronously; a password is checked first, then the visit limit — a human GET is counted by one conditional
 * UPDATE (redirect.repository.ts admitVisit), so that concurrent visits on any number of instances never get more
 * than max_visits redirects; a bot, a HEAD or a wrong password never uses up a visit — and last the forwarded query.
 */
function createLinkVerdict(deps: VisitPolicyDeps) {
  const { queries } = deps;
  const checkPassword = createPasswordCheck(deps);
  const counts = (visit: Visit): boolean => visit.method !== 'HEAD' && !visit.context.agent.isBot;
  const admissionRefusal = (a: VisitAdmission): Refusal | null =>
    a === 'admitted' ? null : a === 'exhausted' ? { kind: 'exhausted' } : MISSING;

  async function guarded(target: LinkTarget, visit: Visit): Promise<string | Refusal> {
    const rules = target.rules!;
    if (rules.passwordHash !== null) {
      const refused = await checkPassword(target.id, rules.passwordHash, visit);
      if (refused) return refused;
    }
    if (rules.maxVisits !== null) {
      const refused = admissionRefusal(
        await (counts(visit) ? queries.admitVisit(target.id) : queries.hasVisitsLeft(target.id)),
      );
      if (refused) return refused;
    }
    return rules.forwardQuery ? withForwardedQuery(target.url, visit.query) : target.url;
  }

  return (target: RedirectTarget, visit: Visit): string | Refusal | Promise<string | Refusal> => {
    if (target.kind === 'missing') return MISSING;
    if (target.kind === 'expired') return EXPIRED;
    if (target.kind === 'disabled') return DISABLED;
    if (target.rules === null) return target.url;
    if (target.rules.passwordHash === null && target.rules.maxVisits === null)
      return withForwardedQuery(target.url, visit.query);
    return guarded(target, visit);
  };
}

/**
 * An unfurler's answer instead of the redirect (SPEC §21), for a link with a preview whose visit passed every
 * check (a password, a visit limit: the refusals stay as they are, so no preview leaks past them); null for
 * everyone else. The user agent is read only for a link that has a preview.
 */
function createPreviews(publicBaseUrl: string) {
  const defaultScheme = new URL(publicBaseUrl).protocol.slice(0, -1);
  const shortUrl = (target: LinkTarget, domain: VisitDomain | undefined): string =>
    domain === undefined
      ? `${publicBaseUrl}/${target.code}`
      : `${domain.scheme ?? defaultScheme}://${domain.hostname}/${target.code}`;
  return (target: LinkTarget, visit: Visit, domain: VisitDomain | undefined): PreviewAnswer | null => {
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

/**
 * What a visit gets (SPEC §6, §13, §19), decided whole in one place: the host's domain, the name's target (the
 * cache or one lookup), the link's rules, and the domain's fallbacks — the URL, the status and the headers the
 * route and the fast path write, and (SPEC §21, next) the rule and the variant that chose it.
 */
export function createVisitPolicy(deps: VisitPolicyDeps) {
  const { resolver, domains, status } = deps;
  const verdictOf = createLinkVerdict(deps);
  const previewFor = createPreviews(deps.publicBaseUrl);
  const finish = (
    verdict: string | Refusal,
    target: RedirectTarget,
    visit: Visit,
    domain: VisitDomain | undefined,
  ): VisitDecision =>
    typeof verdict !== 'string'
      ? fallbackOr(verdict, domain)
      : (previewFor(target as LinkTarget, visit, domain) ??
        redirectTo(verdict, visit.method === 'POST' ? FORM_STATUS : status, target as LinkTarget, domain));

  return {
    decide(visit: Visit): VisitDecision | Promise<VisitDecision> {
      const domain = domains.servedBy(visit.host);
      const decideFor = (target: RedirectTarget): VisitDecision | Promise<VisitDecision> => {
        const verdict = verdictOf(target, visit);
        return verdict instanceof Promise
          ? verdict.then((v) => finish(v, target, visit, domain))
          : finish(verdict, target, visit, domain);
      };
      const target = resolver.resolve(visit.name, domain?.id ?? 0);
      return target instanceof Promise ? target.then(decideFor) : decideFor(target);
    },

    /**
     * The fast path's question: the redirect of a GET or HEAD with no query, when memory alone decides it (a
     * cached live link with no visit rules and no preview (whose answer depends on the user agent); undefined
     * for anything else, which the route then decides.
     */
    decideFromCache(host: string | undefined, name: string): Redirect | undefined {
      const domain = domains.servedBy(host);
      const target = resolver.cached(name, domain?.id ?? 0);
      if (target === undefined || target.kind !== 'link' || target.rules !== null || target.preview !== null)
        return undefined;
      return redirectTo(target.url, status, target, domain);
    },

    /** What GET / means on a host (SPEC §19): undefined on the default domain, its root_redirect (or null) on a domain. */
    rootOf(host: string): string | null | undefined {
      return domains.servedBy(host)?.rootRedirect;
    },
  };
}

export type VisitPolicy = ReturnType<typeof createVisitPolicy>;
