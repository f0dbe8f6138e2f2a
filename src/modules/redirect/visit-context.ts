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
}

/** One visit's context: each fact computed on its first read and kept for the next. */
class RequestVisitContext implements VisitContext {
  #agent: UserAgentFacts | undefined;
  #country: string | null | undefined;
  #languages: string[] | undefined;

  constructor(
    private readonly describe: { agents: UserAgentCache; country: CountryLookup | null },
    public ip: string | undefined,
    private headers: IncomingHttpHeaders,
    public viaTrustedProxy: boolean,
  ) {}

  /** The context of another visit, in this object (VisitContexts.reused): what was computed is forgotten. */
  reset(ip: string | undefined, headers: IncomingHttpHeaders, viaTrustedProxy: boolean): this {
    this.ip = ip;
    this.headers = headers;
    this.viaTrustedProxy = viaTrustedProxy;
    this.#agent = this.#country = this.#languages = undefined;
    return this;
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

/**
 * The visit contexts of this process: one cache of described user agents (traffic repeats a few hundred; a
 * cache hit costs well under a microsecond, a parse tens), and the country's lookup (COUNTRY_HEADER,
 * GEOIP_DATABASE; null: none).
 */
export function visitContexts(country: CountryLookup | null) {
  const describe = { agents: new UserAgentCache(), country };
  /** `ip`: the client address as TRUST_PROXY resolves it (request.ip; the socket's on the fast path). */
  const contexts = (ip: string | undefined, headers: IncomingHttpHeaders, viaTrustedProxy: boolean): VisitContext =>
    new RequestVisitContext(describe, ip, headers, viaTrustedProxy);
  return Object.assign(contexts, {
    /**
     * One context object to be reset per visit, for a caller that is done with each visit's context before the
     * next one starts (the fast path: read while its click is built, synchronously): no object per visit.
     */
    reused(): (ip: string | undefined, headers: IncomingHttpHeaders, viaTrustedProxy: boolean) => VisitContext {
      const context = new RequestVisitContext(describe, undefined, {}, false);
      return (ip, headers, viaTrustedProxy) => context.reset(ip, headers, viaTrustedProxy);
    },
  });
}

export type VisitContexts = ReturnType<typeof visitContexts>;
