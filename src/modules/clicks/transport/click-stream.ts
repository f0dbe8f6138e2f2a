import type { Redis } from 'ioredis';
import { CLICK_SIGNALS, type ClickEvent, type ClickSignal } from '../event/click-event.js';

/**
 * The click stream of the scale-out setup, shared by its producer (redis-click-queue.ts, in every API
 * instance) and its consumers (click-stream-consumer.ts, in `npm run worker` and optionally in the API):
 * one Redis stream `<prefix>clicks`, one consumer group, one entry per visit.
 */
export const CLICK_GROUP = 'click-writers';

export const clickStreamKeys = (prefix: string) => ({
  stream: `${prefix}clicks`,
  /** clock time (ms) of the last batch a consumer committed: every instance reports the flush lag from it */
  lastWrite: `${prefix}clicks:last-write`,
});

/** A visit as it travels: the event plus its key (the stream's idempotency key, see replay-safe-click-writer.ts). */
export type KeyedClick = ClickEvent & { key: string };

/**
 * One field holding a JSON array: typed (null stays null) and checked in one place. Measured
 * (scripts/scaleout/redis-memory.ts): 243 B per entry, against 229 B with one field per property, whose names
 * a stream stores once per node; the difference was not worth a second encoding of nulls and numbers.
 */
export const CLICK_FIELD = 'c';

export function encodeClick(e: KeyedClick): string {
  return encodeClickAs(e.key, e);
}

/** The encodeClick array with `head` in the key's place (the click journal: the click's position). */
export function encodeClickAs(head: string | number, e: ClickEvent): string {
  const fields = [
    head,
    e.linkId,
    e.shortCode,
    e.clickedAt,
    e.ip,
    e.userAgent,
    e.referrer,
    e.country ?? null,
    e.visitor ?? null,
  ];
  // The alias, the domain, the rule and the variant only when there is one: a visit through the code on the
  // default domain keeps the 9 items (and bytes) it had; a visit on a domain of its own (SPEC §19) has 11, its
  // alias null or not; a visit a rule or a split routed (SPEC §21) has 13, the four of them null or not; a
  // click with a signal (a HEAD or a prefetch, HONOR_GPC's count only: SPEC §24) has 14.
  const signalled = e.signal != null;
  const routed = signalled || e.ruleId != null || e.variantId != null;
  if (routed || e.alias != null || e.domain != null) fields.push(e.alias ?? null);
  if (routed || e.domain != null) fields.push(e.domain ?? null);
  if (routed) fields.push(e.ruleId ?? null, e.variantId ?? null);
  if (signalled) fields.push(e.signal!);
  return JSON.stringify(fields);
}

const str = (v: unknown): v is string => typeof v === 'string';
const strOrNull = (v: unknown): v is string | null => v === null || typeof v === 'string';

/** The click of an entry's fields, or null when they are not one (the consumer acknowledges and logs it). */
export function decodeClick(fields: readonly string[]): KeyedClick | null {
  const i = fields.indexOf(CLICK_FIELD);
  if (i < 0 || i % 2 !== 0 || fields[i + 1] === undefined) return null;
  return decodeClickJson(fields[i + 1]!);
}

/** The click of one encodeClick text (a stream entry's field), or null when it is not one. */
export function decodeClickJson(text: string): KeyedClick | null {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return null;
  }
  return clickOfFields(v);
}

/** The lengths an encodeClick array has had (clickOfFields). */
const ITEM_COUNTS = new Set([7, 9, 10, 11, 13, 14]);

/**
 * The click of an encodeClick array, parsed (a stream entry's, or a journal line's with its position in
 * place of the key), or null when it is not one.
 */
export function clickOfFields(v: unknown): KeyedClick | null {
  // 7 items: written before the analytics (no country, no visitor hash); still read. 10: a visit through an alias;
  // 11: a visit on a domain of its own (SPEC §19); 13: a visit a rule or a split routed (SPEC §21). Entries
  // written before the rules (9 to 11 items) read as routed by none. 14: a click with a signal (SPEC §24); a
  // consumer older than that reads it as no click, so the scale-out setup upgrades its workers first.
  if (!Array.isArray(v) || !ITEM_COUNTS.has(v.length)) return null;
  const [
    key,
    linkId,
    shortCode,
    clickedAt,
    ip,
    userAgent,
    referrer,
    country = null,
    visitor = null,
    alias = null,
    domain = null,
    ruleId = null,
    variantId = null,
    signal = null,
  ] = v as unknown[];
  if (!str(key) || !Number.isSafeInteger(linkId) || !str(shortCode) || !Number.isSafeInteger(clickedAt)) return null;
  if (
    !strOrNull(ip) ||
    !strOrNull(userAgent) ||
    !strOrNull(referrer) ||
    !strOrNull(country) ||
    !strOrNull(visitor) ||
    !strOrNull(alias) ||
    !strOrNull(domain) ||
    !strOrNull(ruleId) ||
    !strOrNull(variantId) ||
    (signal !== null && !CLICK_SIGNALS.includes(signal as ClickSignal))
  )
    return null;
  const click: KeyedClick = {
    key,
    linkId: linkId as number,
    shortCode,
    clickedAt: clickedAt as number,
    ip,
    userAgent,
    referrer,
    country,
    visitor,
  };
  if (alias !== null) click.alias = alias;
  if (domain !== null) click.domain = domain;
  if (ruleId !== null) click.ruleId = ruleId;
  if (variantId !== null) click.variantId = variantId;
  if (signal !== null) click.signal = signal as ClickSignal;
  return click;
}

/**
 * Creates the consumer group if it does not exist, reading from the stream's first entry (`0`, not `$`:
 * clicks appended before any consumer started are not skipped).
 */
export async function ensureClickGroup(redis: Redis, stream: string): Promise<void> {
  try {
    await redis.xgroup('CREATE', stream, CLICK_GROUP, '0', 'MKSTREAM');
  } catch (err) {
    if (!String((err as Error).message).startsWith('BUSYGROUP')) throw err;
  }
}

/**
 * `a` < `b` for stream ids (`<ms>-<seq>`, each a decimal without leading zeros): compared part by part, the
 * shorter number first, then as text. Every landed append is compared (redis-click-queue.ts), so no number is
 * parsed.
 */
export function streamIdBefore(a: string, b: string): boolean {
  const ad = a.indexOf('-');
  const bd = b.indexOf('-');
  if (ad !== bd) return ad < bd;
  const am = a.slice(0, ad);
  const bm = b.slice(0, bd);
  if (am !== bm) return am < bm;
  // The same milliseconds: the sequences decide, and they are all that differ.
  return a.length !== b.length ? a.length < b.length : a < b;
}

/** XINFO GROUPS' entry for the click group as a record, or null when the group (or the stream) is missing. */
export async function clickGroupInfo(redis: Redis, stream: string): Promise<Record<string, unknown> | null> {
  let groups: unknown[];
  try {
    groups = (await redis.xinfo('GROUPS', stream)) as unknown[];
  } catch (err) {
    if (/no such key/i.test((err as Error).message)) return null;
    throw err;
  }
  for (const g of groups as unknown[][]) {
    const info: Record<string, unknown> = {};
    for (let i = 0; i + 1 < g.length; i += 2) info[String(g[i])] = g[i + 1];
    if (info.name === CLICK_GROUP) return info;
  }
  return null;
}
