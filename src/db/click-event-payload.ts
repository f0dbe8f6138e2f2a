/**
 * SPEC §22's `link.clicked` envelope, and the compact form the embedded click writer stores it in: the event is
 * the largest row a click writes, and most of its envelope is names (the JSON keys), the click's time written
 * out, and the code and domain twice. The `events` row already holds the event's id, type, time (`created_at`:
 * the envelope's `timestamp`) and link (`link_id`), so the payload keeps only the rest, as a JSON array in the
 * order of CLICK_FIELDS; db/events.ts builds the envelope from the row when a consumer reads it, the same object
 * with its keys in the same order as a whole stored envelope gives. Rows of either form may sit side by side
 * (the PostgreSQL writers store whole envelopes). Migration 058 marks a database that may hold compact rows, so
 * that a build that cannot read them refuses to start on it. No package imported: the writer thread loads this.
 */

/** What a click's event says of it and of its link, beyond the event row's own columns. */
export interface ClickEventValues {
  /** the click record's id */
  clickId: number;
  /** ms since the epoch */
  clickedAt: number;
  domain: string | null;
  shortCode: string;
  alias: string | null;
  country: string | null;
  device: string | null;
  browser: string | null;
  os: string | null;
  referrerHost: string | null;
  ruleId: string | null;
  variantId: string | null;
  bot: boolean;
  /** the link's destination when it was clicked */
  originalUrl: string;
}

/** The compact payload's order. */
const CLICK_FIELDS = [
  'clickId',
  'clickedAt',
  'domain',
  'shortCode',
  'alias',
  'country',
  'device',
  'browser',
  'os',
  'referrerHost',
  'ruleId',
  'variantId',
  'bot',
  'originalUrl',
] as const satisfies ReadonlyArray<keyof ClickEventValues>;

/** `link.clicked`'s data (SPEC §22): the click and the link it reached. */
export function linkClickedData(v: ClickEventValues, linkId: number) {
  return {
    click: {
      id: v.clickId,
      clicked_at: new Date(v.clickedAt).toISOString(),
      domain: v.domain,
      short_code: v.shortCode,
      alias: v.alias,
      country: v.country,
      device: v.device,
      browser: v.browser,
      os: v.os,
      referrer_host: v.referrerHost,
      rule_id: v.ruleId,
      variant_id: v.variantId,
      bot: v.bot,
    },
    link: { id: linkId, short_code: v.shortCode, domain: v.domain, original_url: v.originalUrl },
  };
}

/** The compact payload of a click's event. */
export const compactClickPayload = (v: ClickEventValues): string =>
  JSON.stringify(CLICK_FIELDS.map((field) => v[field]));

/** A stored payload read back: a compact click's values, or null for a whole envelope (every other form). */
export function clickValuesOf(payload: string): ClickEventValues | null {
  if (!payload.startsWith('[')) return null;
  const values = JSON.parse(payload) as unknown[];
  return Object.fromEntries(CLICK_FIELDS.map((field, i) => [field, values[i]])) as unknown as ClickEventValues;
}
