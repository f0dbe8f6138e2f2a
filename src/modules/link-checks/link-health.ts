import type { OutboundError } from '../../infra/outbound-http.js';

/**
 * What one check of a destination means for the link's health (SPEC §24): the verdict of an answer or of a
 * failure, the next health from the current one, and when the link is due again. Pure: the checker
 * (link-checker.ts) asks, the repository writes.
 */

export type HealthStatus = 'ok' | 'broken' | 'unknown';

/** A check's verdict: the page is there, it is not, or the check could not tell (a private address). */
export interface CheckOutcome {
  kind: 'success' | 'failure' | 'inconclusive';
  /** the final answer's status (after redirects); null: no answer */
  httpStatus: number | null;
  /** in words for the link's owner, never an address or a system error; null: nothing wrong */
  error: string | null;
}

export interface Health {
  status: HealthStatus;
  failures: number;
  since: number | null;
}

/** Failed checks in a row that make a link broken. */
export const FAILURES_TO_BREAK = 2;

/**
 * An answer's verdict. 404, 410 and 5xx say the page is gone or the site is down. Every other status says a
 * server answered for the page: 2xx, a 3xx left over (304, or one past no Location), and the other 4xx — 401,
 * 403, 405, 429, 451 — which a page behind a sign-in, a bot wall or a rate limit answers a robot while it works
 * for people; counting those broken would send people away from pages that work.
 */
export function answerOutcome(status: number): CheckOutcome {
  if (status === 404 || status === 410 || status >= 500)
    return { kind: 'failure', httpStatus: status, error: `the destination answered ${status}` };
  return { kind: 'success', httpStatus: status, error: null };
}

/** A failed request's verdict: DNS, TLS, timeouts, refused connections and loops fail; a private address is not checked. */
export function failureOutcome(err: OutboundError): CheckOutcome {
  switch (err.failure) {
    case 'address-not-allowed':
      return {
        kind: 'inconclusive',
        httpStatus: null,
        error: 'not checked: the destination or a redirect is on a private address (LINK_CHECK_ALLOW_PRIVATE)',
      };
    case 'bad-url':
      return {
        kind: 'inconclusive',
        httpStatus: null,
        error: 'not checked: a redirect leads to a URL that is not http(s)',
      };
    case 'no-address':
      return { kind: 'failure', httpStatus: null, error: 'the host name has no address (DNS)' };
    case 'dns-failed':
      return { kind: 'failure', httpStatus: null, error: 'DNS gave no answer for the host name' };
    case 'timeout':
      return { kind: 'failure', httpStatus: null, error: 'no answer within 10 s' };
    case 'tls':
      return { kind: 'failure', httpStatus: null, error: 'the TLS handshake failed (certificate or protocol)' };
    case 'too-many-redirects':
      return { kind: 'failure', httpStatus: null, error: 'more than 5 redirects' };
    case 'bad-response':
      return { kind: 'failure', httpStatus: null, error: 'the answer was no valid HTTP' };
    default:
      return { kind: 'failure', httpStatus: null, error: 'no answer (the connection failed or was cut)' };
  }
}

/** The health after a check: broken after two failures in a row, ok after one success, unknown when not checkable. */
export function nextHealth(current: Health, outcome: CheckOutcome, now: number): Health {
  const since = (status: HealthStatus) => (current.status === status ? current.since : now);
  if (outcome.kind === 'success') return { status: 'ok', failures: 0, since: since('ok') };
  if (outcome.kind === 'inconclusive') return { status: 'unknown', failures: 0, since: since('unknown') };
  const failures = current.failures + 1;
  if (failures >= FAILURES_TO_BREAK) return { status: 'broken', failures, since: since('broken') };
  return { status: current.status, failures, since: current.since };
}

/** A link's place in the interval: the same fraction for a link whatever its history (Knuth's multiplicative hash). */
const phaseOf = (linkId: number): number => (Math.imul(linkId, 2654435761) >>> 0) / 2 ** 32;

/** A failure that did not break the link yet is tried again this soon: a quarter of the interval, at most an hour. */
const retryDelay = (intervalMs: number): number => Math.min(intervalMs / 4, 3_600_000);

/**
 * When the link is due again. A link's checks fall on its own slot of the interval (its phase), so that
 * however links arrive — an import of 100,000 at once — their checks spread over the interval after the
 * first round: the next slot at least half an interval after this check, which is exactly one interval
 * after the last slot once the link is in step. A first failure is tried again sooner (retryDelay), so that a
 * link is found broken within a quarter of the interval rather than a whole one.
 */
export function nextCheckAt(linkId: number, health: Health, now: number, intervalMs: number): number {
  if (health.failures > 0 && health.failures < FAILURES_TO_BREAK) return Math.round(now + retryDelay(intervalMs));
  const phase = phaseOf(linkId) * intervalMs;
  const earliest = now + intervalMs / 2;
  const k = Math.ceil((earliest - phase) / intervalMs);
  return Math.round(k * intervalMs + phase);
}
