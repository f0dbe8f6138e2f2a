import type { Device } from './dimensions.js';
import type { UserAgentFacts } from './user-agent.js';
import type { RecordAddress } from './visit-context.js';

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
  /** the routing rule that chose the URL (SPEC §21); absent or null: none (the link's original_url) */
  ruleId?: string | null;
  /** the A/B variant the visit was sent to (SPEC §21); absent or null: none */
  variantId?: string | null;
  /**
   * The user agent as the visit described it (user-agent.ts: a bot is the device `bot`), where its rules needed
   * it. Absent where no one has described it yet — most visits, imported ones, clicks read back from the journal
   * or the Redis stream, which do not carry it: the writer describes those itself (rollup-plan.ts clickFacts).
   */
  device?: Device;
  browser?: string | null;
  os?: string | null;
  /**
   * What the visit itself said of the click besides its user agent (SPEC §15, §24; ClickSignal). Absent or null:
   * the user agent alone decides whether a bot made it.
   */
  signal?: ClickSignal | null;
}

/**
 * `bot`: a HEAD request or a prefetch (`Sec-Purpose: prefetch`, `Purpose: prefetch`), a bot's click whatever its
 * user agent says. `count` / `count-bot` (HONOR_GPC: the visit sent `Sec-GPC: 1` or `DNT: 1`): a human's / a
 * bot's visit recorded as a count only: no address, user agent, referrer, visitor, country, rule or variant.
 */
export type ClickSignal = 'bot' | 'count' | 'count-bot';
export const CLICK_SIGNALS: readonly ClickSignal[] = ['bot', 'count', 'count-bot'];

/** Fields kept as numbers (Float64Array columns in a batch). */
export const CLICK_NUMBER_FIELDS = ['linkId', 'clickedAt'] as const;
/** Fields kept as text or null (interned per batch: user agents and referrers repeat a lot). */
export const CLICK_TEXT_FIELDS = [
  'shortCode',
  'ip',
  'userAgent',
  'referrer',
  'key',
  'country',
  'visitor',
  'alias',
  'domain',
  'ruleId',
  'variantId',
  'device',
  'browser',
  'os',
  'signal',
] as const;

export type ClickNumberField = (typeof CLICK_NUMBER_FIELDS)[number];
export type ClickTextField = (typeof CLICK_TEXT_FIELDS)[number];

// Every field of ClickEvent is in exactly one list: a new field that is in neither fails to compile here.
type Listed = ClickNumberField | ClickTextField;
const everyFieldListed: Record<keyof ClickEvent, true> & Record<Listed, true> = {
  linkId: true,
  clickedAt: true,
  shortCode: true,
  ip: true,
  userAgent: true,
  referrer: true,
  key: true,
  country: true,
  visitor: true,
  alias: true,
  domain: true,
  ruleId: true,
  variantId: true,
  device: true,
  browser: true,
  os: true,
  signal: true,
};
void everyFieldListed;

/** Text fields' bounds as a record keeps them (SPEC §6). */
export const CLICK_TEXT_LIMITS = { ip: 45, userAgent: 512, referrer: 2048 } as const;

export const clip = (value: string | undefined, max: number): string | null =>
  value === undefined || value === '' ? null : value.length > max ? value.slice(0, max) : value;

/**
 * What the redirect learned of the visitor, once per visit (modules/redirect/visit-context.ts): the same facts
 * serve the visit's rules and its click, so the user agent is described once — at the visit where its rules
 * needed it (a bot does not use up a visit), else by the writer, off the request path.
 */
export interface VisitorFacts {
  /** the client address as TRUST_PROXY resolves it */
  readonly ip: string | undefined;
  readonly userAgent: string | undefined;
  readonly referrer: string | undefined;
  /** the user agent's description if the visit made one (device, browser, OS, bot); null: the writer describes it */
  readonly agentIfDescribed: UserAgentFacts | null;
  /** from a trusted proxy's COUNTRY_HEADER or GEOIP_DATABASE; null if unknown */
  readonly country: string | null;
  /**
   * The request says a bot made it whatever its user agent: a HEAD request or a prefetch (visit-signals.ts). A
   * header check, on every visit: the user agent is described only for countOnly's visits.
   */
  readonly botSignal: boolean;
  /** HONOR_GPC and the visit sent `Sec-GPC: 1` or `DNT: 1`: its click is recorded as a count only */
  readonly countOnly: boolean;
  /** whether a bot made the visit: botSignal or the user agent (described on first read) */
  readonly isBot: boolean;
}

/** What the redirect knows of a visit: the link, the name visited, its domain, the time and the visitor. */
export interface VisitFacts {
  linkId: number;
  shortCode: string;
  /** the alias visited; null: the code */
  alias: string | null;
  clickedAt: number;
  /** the verified domain the host named (SPEC §19); undefined: the default domain */
  domain?: string | undefined;
  /** the routing rule and the A/B variant that chose the URL (SPEC §21, the visit policy's decision); null: none */
  rule: string | null;
  variant: string | null;
  visitor: VisitorFacts;
}

/**
 * The click event of a visit: the redirect route and its fast path both build it here, from the visitor's facts
 * as the visit found them; a description of the user agent the visit made travels with the click, so the writer
 * does not describe it again. `recordAddress` (IP_ANONYMIZE) shortens the address and adds the visitor's daily
 * hash.
 */
export function buildClickEvent(v: VisitFacts, recordAddress: RecordAddress | null): ClickEvent {
  return fillClickEvent({} as ClickEvent, v, recordAddress);
}

/**
 * One click record, refilled for each visit (the fast path's): no object per click. A ClickSink copies what it
 * keeps before enqueue returns (click-sink.ts), so the record is free again as soon as it is enqueued. Every
 * field is always present (null or undefined where a built event leaves it out), so it keeps one shape.
 */
export function clickRecord(recordAddress: RecordAddress | null): (v: VisitFacts) => ClickEvent {
  const record: ClickEvent = {
    linkId: 0,
    shortCode: '',
    clickedAt: 0,
    ip: null,
    userAgent: null,
    referrer: null,
    country: null,
    visitor: undefined,
    alias: undefined,
    domain: undefined,
    device: undefined,
    browser: undefined,
    os: undefined,
    ruleId: undefined,
    variantId: undefined,
    signal: undefined,
  };
  return (v) => {
    record.visitor = record.alias = record.domain = record.device = record.browser = record.os = undefined;
    record.ruleId = record.variantId = record.signal = undefined;
    return fillClickEvent(record, v, recordAddress);
  };
}

function fillClickEvent(event: ClickEvent, v: VisitFacts, recordAddress: RecordAddress | null): ClickEvent {
  const { visitor } = v;
  if (visitor.countOnly) return fillCountOnly(event, v);
  const ip = clip(visitor.ip, CLICK_TEXT_LIMITS.ip);
  event.linkId = v.linkId;
  event.shortCode = v.shortCode;
  event.clickedAt = v.clickedAt;
  event.ip = ip;
  event.userAgent = clip(visitor.userAgent, CLICK_TEXT_LIMITS.userAgent);
  event.referrer = clip(visitor.referrer, CLICK_TEXT_LIMITS.referrer);
  event.country = visitor.country;
  const agent = visitor.agentIfDescribed;
  if (agent !== null) {
    event.device = agent.device;
    event.browser = agent.browser;
    event.os = agent.os;
  }
  if (v.alias !== null) event.alias = v.alias;
  if (v.domain !== undefined) event.domain = v.domain;
  if (v.rule !== null) event.ruleId = v.rule;
  if (v.variant !== null) event.variantId = v.variant;
  if (visitor.botSignal) event.signal = 'bot';
  if (recordAddress === null) return event;
  const recorded = recordAddress(ip, v.clickedAt);
  event.ip = recorded.ip;
  if (recorded.visitor !== undefined) event.visitor = recorded.visitor;
  return event;
}

/**
 * HONOR_GPC (SPEC §24): the click of a visit that asked not to be tracked keeps its time, link (and the name
 * visited), domain and bot flag, and nothing of the visitor: no address, user agent, referrer, visitor hash,
 * country, nor the rule or variant its facts chose. It counts in the totals and the time series; it is no
 * unique visitor and in no top list but top_links.
 */
function fillCountOnly(event: ClickEvent, v: VisitFacts): ClickEvent {
  event.linkId = v.linkId;
  event.shortCode = v.shortCode;
  event.clickedAt = v.clickedAt;
  event.ip = event.userAgent = event.referrer = event.country = null;
  if (v.alias !== null) event.alias = v.alias;
  if (v.domain !== undefined) event.domain = v.domain;
  event.signal = v.visitor.isBot ? 'count-bot' : 'count';
  return event;
}
