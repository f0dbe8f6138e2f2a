import type { IncomingHttpHeaders } from 'node:http';
import type { DescribeVisit } from './visit-context.js';

/**
 * One visit, as the redirect saw it (SPEC §6, §15). To add a field: add it here, to one of the field lists
 * below (the type check says so if it is missing), and fill it in `buildClickEvent`; the batch columns, the
 * writer thread's message, the journal and the Redis stream carry every listed field without further edits.
 */
export interface ClickEvent {
  linkId: number;
  shortCode: string;
  clickedAt: number;
  /** proxy-aware client address (TRUST_PROXY), at most 45 characters */
  ip: string | null;
  userAgent: string | null;
  referrer: string | null;
  /**
   * The visit's random id, set where a click may be delivered twice (the Redis stream; journal lines of the
   * earlier format): a unique index turns a replayed copy into a failed, retried transaction instead of a
   * second count (replay-safe-click-writer.ts). Clicks written from memory, journaled or not, leave it out
   * (the journal's replay is exact by its mark: click-journal.ts).
   */
  key?: string;
  /** ISO 3166-1 alpha-2 from a trusted proxy's COUNTRY_HEADER or GEOIP_DATABASE (visit-context.ts), null if unknown */
  country?: string | null;
  /** with IP_ANONYMIZE: the visitor's daily hash, which unique_visitors counts in place of the (shortened) ip */
  visitor?: string | null;
  /** the alias the visit came through (SPEC §20); absent or null: through the code */
  alias?: string | null;
  /** the host name of the domain the visit came in on (SPEC §19); absent or null: the default domain */
  domain?: string | null;
}

/** Fields kept as numbers (Float64Array columns in a batch). */
export const CLICK_NUMBER_FIELDS = ['linkId', 'clickedAt'] as const;
/** Fields kept as text or null (interned per batch: user agents and referrers repeat a lot). */
export const CLICK_TEXT_FIELDS = ['shortCode', 'ip', 'userAgent', 'referrer', 'key', 'country', 'visitor', 'alias', 'domain'] as const;

export type ClickNumberField = (typeof CLICK_NUMBER_FIELDS)[number];
export type ClickTextField = (typeof CLICK_TEXT_FIELDS)[number];

// Every field of ClickEvent is in exactly one list: a new field that is in neither fails to compile here.
type Listed = ClickNumberField | ClickTextField;
const everyFieldListed: Record<keyof ClickEvent, true> & Record<Listed, true> = {
  linkId: true, clickedAt: true, shortCode: true, ip: true, userAgent: true, referrer: true, key: true, country: true, visitor: true, alias: true, domain: true,
};
void everyFieldListed;

/** Text fields' bounds as a record keeps them (SPEC §6). */
export const CLICK_TEXT_LIMITS = { ip: 45, userAgent: 512, referrer: 2048 } as const;

export const clip = (value: string | undefined, max: number): string | null =>
  value === undefined || value === '' ? null : value.length > max ? value.slice(0, max) : value;

/** What the redirect knows of a visit: the link, the time, the client address and the request's headers. */
export interface VisitFacts {
  linkId: number;
  shortCode: string;
  /** the alias visited; null: the code */
  alias: string | null;
  clickedAt: number;
  ip: string | undefined;
  headers: IncomingHttpHeaders;
  /** the request came through a proxy TRUST_PROXY trusts (its country header is believed) */
  viaTrustedProxy: boolean;
  /** the verified domain the host named (SPEC §19); undefined: the default domain */
  domain?: string | undefined;
}

/**
 * The click event of a visit: the redirect route and its fast path both build it here. `describe` adds the
 * country and, with IP_ANONYMIZE, shortens the address and adds the visitor's daily hash (visit-context.ts);
 * the user agent is described later, by the writer (rollup-plan.ts), off the request path.
 */
export function buildClickEvent(v: VisitFacts, describe: DescribeVisit | null): ClickEvent {
  const ip = clip(v.ip, CLICK_TEXT_LIMITS.ip);
  const event: ClickEvent = {
    linkId: v.linkId,
    shortCode: v.shortCode,
    clickedAt: v.clickedAt,
    ip,
    userAgent: clip(v.headers['user-agent'], CLICK_TEXT_LIMITS.userAgent),
    referrer: clip(v.headers.referer, CLICK_TEXT_LIMITS.referrer),
  };
  if (v.alias !== null) event.alias = v.alias;
  if (v.domain !== undefined) event.domain = v.domain;
  if (describe === null) return event;
  const context = describe({ ip, headers: v.headers, viaTrustedProxy: v.viaTrustedProxy, at: v.clickedAt });
  event.ip = context.ip;
  event.country = context.country;
  if (context.visitor !== undefined) event.visitor = context.visitor;
  return event;
}
