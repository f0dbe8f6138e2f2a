import UAParser from 'ua-parser-js';
import { isBotUserAgent } from './bot.js';
import type { Device } from './dimensions.js';

/** What a click record and the top lists say about a User-Agent (SPEC §15). */
export interface UserAgentFacts {
  isBot: boolean;
  /** browser family as ua-parser-js names it ("Chrome", "Mobile Safari"), null when unknown */
  browser: string | null;
  /** operating system ("Windows", "iOS"), null when unknown */
  os: string | null;
  device: Device;
}

/** Distinct user agents remembered: a few MB at most (a UA is clipped to 512 characters before it gets here). */
export const USER_AGENT_CACHE_SIZE = 5_000;
const NAME_LENGTH = 64;

const clip = (name: string | undefined): string | null => (name ? name.slice(0, NAME_LENGTH) : null);

function deviceOf(type: string | undefined, browser: string | null, isBot: boolean): Device {
  if (isBot) return 'bot';
  if (type === 'mobile') return 'mobile';
  if (type === 'tablet') return 'tablet';
  // ua-parser-js names no type for desktops; consoles, TVs, wearables, XR and embedded are "other".
  if (type === undefined && browser !== null) return 'desktop';
  return 'other';
}

function parse(userAgent: string | null): UserAgentFacts {
  const isBot = isBotUserAgent(userAgent);
  if (!userAgent) return { isBot, browser: null, os: null, device: 'bot' };
  const r = new UAParser(userAgent).getResult();
  const browser = clip(r.browser.name);
  return { isBot, browser, os: clip(r.os.name), device: deviceOf(r.device.type, browser, isBot) };
}

/**
 * A bounded cache of parsed user agents, keyed by the exact string. Traffic repeats a few thousand agents;
 * parsing one with ua-parser-js costs tens of microseconds (bench/user-agent.ts), a hit one Map lookup. A hit
 * changes nothing but a flag: moving the entry to the end of the Map on every hit (a true LRU) cost a delete
 * and an insert per click, about 6 µs of the click writer's thread per human click (bench/ profile of
 * redirect-browser). When the cache is full, the CLOCK algorithm evicts: the oldest entries that were read since
 * they were inserted get a second chance (moved to the end, flag cleared), the first that was not is dropped.
 */
export class UserAgentCache {
  private readonly entries = new Map<string, { facts: UserAgentFacts; used: boolean }>();
  constructor(private readonly capacity = USER_AGENT_CACHE_SIZE) {}

  describe(userAgent: string | null): UserAgentFacts {
    if (userAgent === null || userAgent === '') return parse(userAgent);
    const hit = this.entries.get(userAgent);
    if (hit !== undefined) {
      hit.used = true;
      return hit.facts;
    }
    const facts = parse(userAgent);
    if (this.capacity <= 0) return facts;
    if (this.entries.size >= this.capacity) this.evictOne();
    this.entries.set(userAgent, { facts, used: false });
    return facts;
  }

  /** Each pass clears one flag, so this ends within `capacity` steps. */
  private evictOne(): void {
    for (const [agent, entry] of this.entries) {
      this.entries.delete(agent);
      if (!entry.used) return;
      entry.used = false;
      this.entries.set(agent, entry);
    }
  }

  get size(): number {
    return this.entries.size;
  }
}

/** Without the cache: for the bench's comparison. */
export const describeUserAgentUncached = parse;
