import type { IncomingHttpHeaders } from 'node:http';
import {
  CLICK_TEXT_LIMITS,
  UserAgentCache,
  type CountryLookup,
  type UserAgentFacts,
  type VisitorFacts,
} from '../clicks/index.js';
import { acceptedLanguages } from '../links/index.js';

export { acceptedLanguages };

/**
 * What a visit tells of its visitor, worked out once per visit and only when something asks: the visit's rules
 * (a bot does not use up a visit; SPEC §21's rules will read the device, the country, the languages) and its
 * click (the clicks module's VisitorFacts) read the same answers, so the user agent is described once. A visit
 * whose rules ask nothing of it leaves it to the writer (off the request path: a parse costs tens of µs, a
 * cache hit about a microsecond of the event loop); one whose rules did hands its description to the click.
 * The route and the fast path each make one per visit (visitContexts).
 */
export interface VisitContext extends VisitorFacts {
  /** the user agent described: device, browser, OS, bot (on first read) */
  readonly agent: UserAgentFacts;
  /** the request came through a proxy TRUST_PROXY trusts (its forwarded headers are believed) */
  readonly viaTrustedProxy: boolean;
  /** Accept-Language's language ranges, most preferred first (`*` and q=0 left out), lower case */
  readonly languages: readonly string[];
  /** the Cookie header (a split's sticky variant, SPEC §21) */
  readonly cookie: string | undefined;
  /** the request's method: HEAD is a bot's visit (botSignal) */
  readonly method: string;
}

/** One visit's context: each fact computed on its first read and kept for the next. */
class RequestVisitContext implements VisitContext {
  #agent: UserAgentFacts | undefined;
  #country: string | null | undefined;
  #languages: string[] | undefined;

  constructor(
    private readonly describe: Describe,
    public method: string,
    public ip: string | undefined,
    private headers: IncomingHttpHeaders,
    public viaTrustedProxy: boolean,
  ) {}

  /** The context of another visit, in this object (VisitContexts.reused): what was computed is forgotten. */
  reset(method: string, ip: string | undefined, headers: IncomingHttpHeaders, viaTrustedProxy: boolean): this {
    this.method = method;
    this.ip = ip;
    this.headers = headers;
    this.viaTrustedProxy = viaTrustedProxy;
    this.#agent = this.#country = this.#languages = undefined;
    return this;
  }

  get botSignal(): boolean {
    const { headers } = this;
    return this.method === 'HEAD' || isPrefetch(headers['sec-purpose']) || isPrefetch(headers.purpose);
  }

  get countOnly(): boolean {
    if (!this.describe.honorGpc) return false;
    const { headers } = this;
    return isOne(headers['sec-gpc']) || isOne(headers.dnt);
  }

  get isBot(): boolean {
    return this.botSignal || this.agent.isBot;
  }

  get userAgent(): string | undefined {
    return this.headers['user-agent'];
  }

  get referrer(): string | undefined {
    return this.headers.referer;
  }

  get cookie(): string | undefined {
    return this.headers.cookie;
  }

  get agentIfDescribed(): UserAgentFacts | null {
    return this.#agent ?? null;
  }

  get agent(): UserAgentFacts {
    // Described as the click records it: clipped (a longer one is no browser's, and would crowd the cache).
    return (this.#agent ??= this.describe.agents.describe(
      this.headers['user-agent']?.slice(0, CLICK_TEXT_LIMITS.userAgent) ?? null,
    ));
  }

  get country(): string | null {
    if (this.#country === undefined)
      this.#country = this.describe.country?.(this.ip ?? null, this.headers, this.viaTrustedProxy) ?? null;
    return this.#country;
  }

  get languages(): readonly string[] {
    return (this.#languages ??= acceptedLanguages(this.headers['accept-language'] as string | undefined));
  }
}

interface Describe {
  agents: UserAgentCache;
  country: CountryLookup | null;
  /** HONOR_GPC */
  honorGpc: boolean;
}

/**
 * Whether a `Sec-Purpose` or `Purpose` header asks for a prefetch: a list of items (`,`), each a token with
 * parameters (`prefetch;prerender`, `prefetch; anonymous-client-ip`); any item whose token is `prefetch`.
 * Absent (nearly every visit): one property read.
 */
export function isPrefetch(value: string | string[] | undefined): boolean {
  if (value === undefined) return false;
  const text = (typeof value === 'string' ? value : value.join(',')).toLowerCase();
  if (!text.includes('prefetch')) return false;
  return text.split(',').some((item) => item.split(';', 1)[0]!.trim() === 'prefetch');
}

/** `Sec-GPC: 1`, `DNT: 1` (a header sent twice: its first value). */
const isOne = (value: string | string[] | undefined): boolean =>
  value !== undefined && (typeof value === 'string' ? value : (value[0] ?? '')).trim() === '1';

type NewContext = (
  method: string,
  ip: string | undefined,
  headers: IncomingHttpHeaders,
  viaTrustedProxy: boolean,
) => VisitContext;

/**
 * The visit contexts of this process: one cache of described user agents (traffic repeats a few hundred; a
 * cache hit costs well under a microsecond, a parse tens), the country's lookup (COUNTRY_HEADER,
 * GEOIP_DATABASE; null: none) and HONOR_GPC.
 */
export function visitContexts(country: CountryLookup | null, opts: { honorGpc?: boolean } = {}) {
  const describe: Describe = { agents: new UserAgentCache(), country, honorGpc: opts.honorGpc ?? false };
  /** `ip`: the client address as TRUST_PROXY resolves it (request.ip; the socket's on the fast path). */
  const contexts: NewContext = (method, ip, headers, viaTrustedProxy) =>
    new RequestVisitContext(describe, method, ip, headers, viaTrustedProxy);
  return Object.assign(contexts, {
    /**
     * One context object to be reset per visit, for a caller that is done with each visit's context before the
     * next one starts (the fast path: read while its click is built, synchronously): no object per visit.
     */
    reused(): NewContext {
      const context = new RequestVisitContext(describe, 'GET', undefined, {}, false);
      return (method, ip, headers, viaTrustedProxy) => context.reset(method, ip, headers, viaTrustedProxy);
    },
  });
}

export type VisitContexts = ReturnType<typeof visitContexts>;
