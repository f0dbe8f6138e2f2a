/**
 * Timestamps anywhere in the API lie between 1970 and 9999 (SPEC §12): earlier ones are not click or expiry
 * times, and later ones cannot be written in ISO 8601 without an expanded year (`+010000-…`), which clients
 * do not parse. The schemas check the format (RFC 3339 with a zone); these helpers check the range.
 */
export const EARLIEST_INSTANT = 0;
export const LATEST_INSTANT = Date.parse('9999-12-31T23:59:59.999Z');

/** What a timestamp must be, with an example: the message of every date-time field or parameter. */
export const INSTANT_RULE =
  'must be an RFC 3339 date-time with a time zone, between 1970-01-01T00:00:00Z and 9999-12-31T23:59:59.999Z (e.g. 2030-01-01T00:00:00Z)';

/** The epoch milliseconds of an RFC 3339 text, or null when it does not parse or lies outside 1970–9999. */
export function parseInstant(raw: string): number | null {
  const ms = Date.parse(raw);
  return Number.isFinite(ms) && ms >= EARLIEST_INSTANT && ms <= LATEST_INSTANT ? ms : null;
}
