import { newEventIds } from '../../../db/event-ids.js';
import { compactClickPayload, linkClickedData, type ClickEventValues } from '../../../db/click-event-payload.js';
import type { PublicEventInput } from '../../../db/events.js';
import type { ClickEvent } from '../event/click-event.js';
import type { ClickFacts } from './rollup-plan.js';

/**
 * SPEC §22's `link.clicked`, written by the click writers in the transaction that stores the click (so an event
 * exists if and only if its click record does; a batch replayed after a crash writes neither twice). What a
 * receiver learns of a visit: the click as its record describes it and the link it reached, never the address or
 * the whole user agent. Bots' clicks too, with `bot: true` (a hook or a stream asks for them or not).
 */

/** What the writer knows of a clicked link from its per-batch lookup of the batch's links. */
export interface ClickedLink {
  userId: number | null;
  domainId: number;
  originalUrl: string;
}

/** A link row's part of a click's event (the PostgreSQL writer's bumpLinks returns it). */
export const clickedLinkOf = (r: {
  user_id: number | string | null;
  domain_id: number | string;
  original_url: string;
}): ClickedLink => ({
  userId: r.user_id === null ? null : Number(r.user_id),
  domainId: Number(r.domain_id),
  originalUrl: r.original_url,
});

const REFERRER_HOST = /^https?:\/\/(?:[^@/?#]*@)?([^/?#]*)/i;

/** The host of a referrer URL, lower case (the same rule as the PostgreSQL set writer's SQL); null: none. */
export function referrerHost(referrer: string | null | undefined): string | null {
  if (!referrer) return null;
  const host = REFERRER_HOST.exec(referrer)?.[1];
  return host ? host.toLowerCase() : null;
}

/** What a stored click's event says (db/click-event-payload.ts): the click (its record's id) and its link. */
export const clickEventValues = (
  clickId: number,
  e: ClickEvent,
  f: ClickFacts,
  link: ClickedLink,
): ClickEventValues => ({
  clickId,
  clickedAt: e.clickedAt,
  domain: e.domain ?? null,
  shortCode: e.shortCode,
  alias: e.alias ?? null,
  country: f.country,
  device: f.device,
  browser: f.browser,
  os: f.os,
  referrerHost: referrerHost(e.referrer),
  ruleId: e.ruleId ?? null,
  variantId: e.variantId ?? null,
  bot: f.isBot,
  originalUrl: link.originalUrl,
});

/** The event to write for a stored click (db/events.ts recordPublicEvents). */
export const linkClickedInput = (
  clickId: number,
  e: ClickEvent,
  f: ClickFacts,
  link: ClickedLink,
): PublicEventInput => ({
  type: 'link.clicked',
  data: linkClickedData(clickEventValues(clickId, e, f, link), e.linkId),
  userId: link.userId,
  domainId: link.domainId || null,
  linkId: e.linkId,
});

/** The `events` table's columns, in the order `linkClickedRows` gives them (the embedded writer's statement). */
export const EVENT_COLUMNS = ['event_id', 'type', 'user_id', 'domain_id', 'link_id', 'payload', 'created_at'] as const;

/**
 * The rows of `events` for stored clicks, their payloads compact (db/click-event-payload.ts: the envelope is built
 * when the event is read); the embedded writer thread loads no Kysely.
 */
export function linkClickedRows(
  stored: ReadonlyArray<{ clickId: number; event: ClickEvent; facts: ClickFacts; link: ClickedLink }>,
  at: number,
): unknown[][] {
  const ids = newEventIds(stored.length);
  return stored.map(({ clickId, event, facts, link }, i) => {
    const payload = compactClickPayload(clickEventValues(clickId, event, facts, link));
    return [ids[i], 'link.clicked', link.userId, link.domainId || null, event.linkId, payload, at];
  });
}
