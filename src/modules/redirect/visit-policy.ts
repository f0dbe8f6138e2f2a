import { normalizeIP } from '@fastify/rate-limit';
import type { AttemptLimiter } from '../../infra/attempt-limiter.js';
import type { Clock } from '../../lib/clock.js';
import type { DomainDirectory } from '../domains/index.js';
import type { PasswordHasher } from '../users/index.js';
import type { RedirectTarget, VisitRules } from './link-cache.js';
import type { RedirectResolver } from './redirect-resolver.js';
import type { RedirectQueries, VisitAdmission } from './redirect.repository.js';
import type { VisitContext } from './visit-context.js';
import { createRouting, type Routed } from './visit-routing.js';
import { brokenFallback } from './broken-link.js';
import { createCachedDecision } from './visit-cached.js';
import { FALLBACK_STATUS, redirectTo, type LinkTarget, type Redirect, type VisitDomain } from './visit-redirect.js';
import { withForwardedQuery } from './visit-query.js';

/** A visit's way, or the link's target URL as it is (no rules). */
type Chosen = string | Routed;

export { cookieValue, variantCookieName } from './visit-routing.js';
import { createPreviews, type PreviewAnswer } from './visit-preview.js';

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
  context: Pick<VisitContext, 'ip' | 'agent' | 'isBot' | 'userAgent' | 'referrer' | 'languages' | 'country' | 'cookie'>;
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

export type { PreviewAnswer } from './visit-preview.js';
export type VisitDecision = Redirect | PreviewAnswer | Refusal;

/** Every visit must reach the service to be counted (SPEC §6). */
export { REDIRECT_CACHE_CONTROL } from './visit-preview.js';
export { FALLBACK_STATUS } from './visit-redirect.js';
export type { Redirect } from './visit-redirect.js';
/** The password form's answer: See Other, so the browser follows with a GET and a reload does not post again. */
const FORM_STATUS = 303;

export { withForwardedQuery } from './visit-query.js';

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
  /** the time rules' after/before compare with; default: the system's */
  clock?: Clock;
  /** a split's draw, uniform in [0, 1); default Math.random (tests count it) */
  random?: () => number;
  /** PUBLIC_BASE_URL: a preview's og:url is the link's short URL on its domain */
  publicBaseUrl: string;
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
  const route = createRouting(deps);
  // A bot's visit (its user agent, a HEAD, a prefetch: the context's isBot) uses up no visit.
  const counts = (visit: Visit): boolean => visit.method !== 'HEAD' && !visit.context.isBot;
  const admissionRefusal = (a: VisitAdmission): Refusal | null =>
    a === 'admitted' ? null : a === 'exhausted' ? { kind: 'exhausted' } : MISSING;

  /** The rules' choice (SPEC §21), then the forwarded query on whichever URL it is (SPEC §13). */
  function chosen(target: LinkTarget, rules: VisitRules, visit: Visit): Chosen {
    if (rules.routing === null) return rules.forwardQuery ? withForwardedQuery(target.url, visit.query) : target.url;
    const routed = route(target, rules.routing, visit);
    if (rules.forwardQuery) routed.url = withForwardedQuery(routed.url, visit.query);
    return routed;
  }

  async function guarded(target: LinkTarget, visit: Visit): Promise<Chosen | Refusal> {
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
    return chosen(target, rules, visit);
  }

  return (target: RedirectTarget, visit: Visit): Chosen | Refusal | Promise<Chosen | Refusal> => {
    if (target.kind === 'missing') return MISSING;
    if (target.kind === 'expired') return EXPIRED;
    if (target.kind === 'disabled') return DISABLED;
    if (target.rules === null) return target.url;
    if (target.rules.passwordHash === null && target.rules.maxVisits === null)
      return chosen(target, target.rules, visit);
    return guarded(target, visit);
  };
}

/**
 * What a visit gets (SPEC §6, §13, §19), decided whole in one place: the host's domain, the name's target (the
 * cache or one lookup), the link's rules, and the domain's fallbacks — the URL, the status and the headers the
 * route and the fast path write, and (SPEC §21) the rule and the variant that chose it.
 */
export function createVisitPolicy(deps: VisitPolicyDeps) {
  const { resolver, domains, status } = deps;
  const verdictOf = createLinkVerdict(deps);
  const route = createRouting(deps);
  const previewFor = createPreviews(deps.publicBaseUrl);
  const finish = (
    verdict: Chosen | Refusal,
    target: RedirectTarget,
    visit: Visit,
    domain: VisitDomain | undefined,
  ): VisitDecision => {
    if (typeof verdict !== 'string' && verdict.kind !== 'routed') return fallbackOr(verdict, domain);
    const preview = previewFor(target as LinkTarget, visit, domain);
    if (preview) return preview;
    const code = visit.method === 'POST' ? FORM_STATUS : status;
    // A broken destination (SPEC §24, broken-link.ts): its fallback, a temporary redirect, still the link's visit.
    const fallback = typeof verdict === 'string' ? brokenFallback(target as LinkTarget, domain, visit.query) : null;
    if (fallback !== null)
      return redirectTo(fallback, code === status ? FALLBACK_STATUS : code, target as LinkTarget, domain);
    if (typeof verdict === 'string') return redirectTo(verdict, code, target as LinkTarget, domain);
    return redirectTo(verdict.url, code, target as LinkTarget, domain, verdict);
  };

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

    decideFromCache: createCachedDecision(deps, route),

    /** What GET / means on a host (SPEC §19): undefined on the default domain, its root_redirect (or null) on a domain. */
    rootOf(host: string): string | null | undefined {
      return domains.servedBy(host)?.rootRedirect;
    },
  };
}

export type VisitPolicy = ReturnType<typeof createVisitPolicy>;
