import { normalizeIP } from '@fastify/rate-limit';
import type { AttemptLimiter } from '../../infra/attempt-limiter.js';
import { isBotUserAgent } from '../clicks/index.js';
import type { PasswordHasher } from '../users/index.js';
import type { RedirectTarget } from './link-cache.js';
import type { LinksRepository, VisitAdmission } from './links.repository.js';

/** What the redirect needs to know of one visit. */
export interface Visit {
  /** GET and POST (the password form) are visits; HEAD only asks what a visit would get */
  method: string;
  /** the raw query string after `?` ('' without one) */
  query: string;
  /** from HTTP Basic or the password form; null when none was sent */
  password: string | null;
  ip: string;
  userAgent: string | undefined;
}

export type VisitDecision =
  | { kind: 'redirect'; url: string }
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

const MISSING: VisitDecision = { kind: 'missing' };
const EXPIRED: VisitDecision = { kind: 'expired' };
const DISABLED: VisitDecision = { kind: 'disabled' };

export interface VisitPolicyDeps {
  links: Pick<LinksRepository, 'admitVisit' | 'hasVisitsLeft'>;
  passwords: Pick<PasswordHasher, 'verify'>;
  /** wrong password attempts per link and client address */
  attempts: AttemptLimiter;
  /** password hashes per client address (PASSWORD_HASHES_PER_MINUTE, plugins/password-hash-budget.ts); default: none */
  hashBudget?: AttemptLimiter;
}

/**
 * What a visit gets (SPEC §13), decided in one place that the redirect route calls: an ordinary link is
 * answered synchronously; a password is checked first (a wrong one counts against this link and address),
 * then the visit limit — a human GET is counted by one conditional UPDATE (links.repository.ts admitVisit),
 * so that concurrent visits on any number of instances never get more than max_visits redirects; a bot, a
 * HEAD or a wrong password never uses up a visit — and last the forwarded query.
 */
export function createVisitPolicy(deps: VisitPolicyDeps) {
  const { links, passwords, attempts } = deps;

  async function checkPassword(linkId: number, hash: string, visit: Visit): Promise<VisitDecision | null> {
    if (visit.password === null) return { kind: 'password', wrong: false };
    const address = normalizeIP(visit.ip);
    // The check is a hash from the address's budget (SPEC §17), right or wrong.
    const overBudget = (await deps.hashBudget?.take(`ip:${address}`)) ?? null;
    if (overBudget !== null) return { kind: 'throttled', retryAfterSeconds: overBudget };
    const key = `${linkId}:${address}`;
    const retryAfterSeconds = await attempts.take(key);
    if (retryAfterSeconds !== null) return { kind: 'throttled', retryAfterSeconds };
    if (!(await passwords.verify(visit.password, hash))) return { kind: 'password', wrong: true };
    await attempts.refund(key);
    return null;
  }

  const counts = (visit: Visit): boolean => visit.method !== 'HEAD' && !isBotUserAgent(visit.userAgent);
  const admissionDecision = (a: VisitAdmission): VisitDecision | null => (a === 'admitted' ? null : a === 'exhausted' ? { kind: 'exhausted' } : MISSING);

  async function decideGuarded(target: Extract<RedirectTarget, { kind: 'link' }>, visit: Visit): Promise<VisitDecision> {
    const rules = target.rules!;
    if (rules.passwordHash !== null) {
      const refused = await checkPassword(target.id, rules.passwordHash, visit);
      if (refused) return refused;
    }
    if (rules.maxVisits !== null) {
      const refused = admissionDecision(await (counts(visit) ? links.admitVisit(target.id) : links.hasVisitsLeft(target.id)));
      if (refused) return refused;
    }
    return { kind: 'redirect', url: rules.forwardQuery ? withForwardedQuery(target.url, visit.query) : target.url };
  }

  return {
    decide(target: RedirectTarget, visit: Visit): VisitDecision | Promise<VisitDecision> {
      if (target.kind === 'missing') return MISSING;
      if (target.kind === 'expired') return EXPIRED;
      if (target.kind === 'disabled') return DISABLED;
      if (target.rules === null) return { kind: 'redirect', url: target.url };
      if (target.rules.passwordHash === null && target.rules.maxVisits === null) {
        return { kind: 'redirect', url: withForwardedQuery(target.url, visit.query) };
      }
      return decideGuarded(target, visit);
    },
  };
}

export type VisitPolicy = ReturnType<typeof createVisitPolicy>;
