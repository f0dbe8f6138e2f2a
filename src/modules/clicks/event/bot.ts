import { isbot } from 'isbot';

/**
 * Whether a visit comes from a crawler, an unfurler or a script rather than a person (SPEC §15). One answer
 * for every consumer: click records (`is_bot`), statistics (bots counted apart) and visit limits
 * (`max_visits` counts humans only). isbot's maintained pattern list; no hand-written list here.
 * A visit without a User-Agent is not a browser: it counts as a bot.
 */
export function isBotUserAgent(userAgent: string | null | undefined): boolean {
  return userAgent === null || userAgent === undefined || userAgent === '' || isbot(userAgent);
}
