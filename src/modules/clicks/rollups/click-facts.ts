import type { ClickEvent } from '../event/click-event.js';
import type { Device } from '../event/dimensions.js';
import { UserAgentCache } from '../event/user-agent.js';

/** What the writer derives from one click for its record (SPEC §15). */
export interface ClickFacts {
  isBot: boolean;
  browser: string | null;
  os: string | null;
  /** null: a count-only click (HONOR_GPC), which says nothing of its visitor */
  device: Device | null;
  country: string | null;
  /** HONOR_GPC's count only (the click's signal `count` or `count-bot`): in the totals, in no top list */
  countOnly: boolean;
}

/**
 * Parsed user agents, per process (each writer thread and worker has its own), for the clicks the redirect did
 * not describe: imported visits, and clicks read back from the journal or the Redis stream.
 */
const userAgents = new UserAgentCache();

/**
 * The record's facts of one click: the user agent as the redirect described it (a bot is the device `bot`), or
 * described here when the click does not carry it; the country as the redirect found it.
 */
export function clickFacts(e: ClickEvent): ClickFacts {
  const signal = e.signal ?? null;
  if (signal === 'count' || signal === 'count-bot')
    return { isBot: signal === 'count-bot', browser: null, os: null, device: null, country: null, countOnly: true };
  const country = e.country ?? null;
  // A HEAD request or a prefetch is a bot's whatever its user agent says (its browser and OS stay as described).
  if (e.device != null) {
    const isBot = signal === 'bot' || e.device === 'bot';
    const device = isBot ? 'bot' : e.device;
    return { isBot, browser: e.browser ?? null, os: e.os ?? null, device, country, countOnly: false };
  }
  const ua = userAgents.describe(e.userAgent);
  if (signal === 'bot')
    return { isBot: true, browser: ua.browser, os: ua.os, device: 'bot', country, countOnly: false };
  return { isBot: ua.isBot, browser: ua.browser, os: ua.os, device: ua.device, country, countOnly: false };
}
