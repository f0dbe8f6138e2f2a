/**
 * The RateLimit-Policy and RateLimit fields of draft-ietf-httpapi-ratelimit-headers (-10 and later): each is an
 * RFC 9651 List of Items whose value is the policy name (an sf-string) with integer parameters.
 *   RateLimit-Policy: "default";q=600;w=60      q = quota (requests), w = window (seconds)
 *   RateLimit: "default";r=599;t=42             r = remaining quota, t = seconds until the quota resets
 * The superseded split fields (RateLimit-Limit/-Remaining/-Reset) and X-RateLimit-* are not sent.
 */
import { AppError } from '../lib/app-error.js';

export interface LimitState {
  policy: string;
  quota: number;
  window: number;
  remaining: number;
  reset: number;
}

/** Policy names are ours (lower-case letters and hyphens), so they need no sf-string escaping. */
const item = (name: string, params: Record<string, number>): string =>
  `"${name}"${Object.entries(params)
    .map(([k, v]) => `;${k}=${Math.max(0, Math.trunc(v))}`)
    .join('')}`;

export function rateLimitHeaders(states: LimitState[]): { 'ratelimit-policy': string; ratelimit: string } {
  return {
    'ratelimit-policy': states.map((s) => item(s.policy, { q: s.quota, w: s.window })).join(', '),
    ratelimit: states.map((s) => item(s.policy, { r: s.remaining, t: s.reset })).join(', '),
  };
}

/** The 429 of a used-up policy, for every limit (the API's and the redirect's): its name, quota and window in the message, Retry-After the seconds until it resets. */
export const rateLimited = (policy: string, quota: number, windowSeconds: number, reset: number): AppError =>
  new AppError('RATE_LIMITED', `Too many requests: the ${policy} limit is ${quota} per ${windowSeconds} s`, [], {
    'Retry-After': String(reset),
  });
