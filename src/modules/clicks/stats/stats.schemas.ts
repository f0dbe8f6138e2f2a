import Type, { type Static, type TSchema } from 'typebox';
import { Count, Instant as instant, NO_CONTROL_CHARACTERS } from '../../../lib/common.schemas.js';
import { renameSchemaProperties, toCamel } from '../../../lib/case-mapping.js';
import { CODE_PATTERN, domainQuery } from '../../../lib/link-code.js';

const Instant = instant();
const Clicks = Count('Clicks');

/** More buckets than this in one answer is a 400: the client asks for a narrower window or a coarser interval. */
export const MAX_BUCKETS = 1000;
export const TOP_VALUES = 10;

/** Bucket sizes of the time series: UTC hours; days, ISO weeks (from Monday) and calendar months in `tz`. */
export const INTERVALS = ['hour', 'day', 'week', 'month'] as const;
export type Interval = (typeof INTERVALS)[number];
const IntervalSchema = (description: string) =>
  Type.Union(
    INTERVALS.map((i) => Type.Literal(i)),
    { description },
  );

const valueCount = (what: string) =>
  Type.Object(
    { value: Type.String({ maxLength: 2048, pattern: NO_CONTROL_CHARACTERS, description: what }), clicks: Clicks },
    { additionalProperties: false },
  );

const TOPS_NOTE =
  'Human visits only, over the whole UTC days of the window, most clicks first (ties by value), at most 10. At most 100 distinct values are kept per link, day and kind; later new ones count as "(other)".';
const top = (what: string, extra = '') =>
  Type.Array(valueCount(what), { maxItems: TOP_VALUES, description: `${TOPS_NOTE}${extra}` });

const Tz = Type.String({
  minLength: 1,
  maxLength: 64,
  pattern: '^[A-Za-z0-9_+/-]+$',
  description:
    'IANA time zone (e.g. `Europe/Berlin`): day, week and month buckets start at local midnight. Default `UTC`. An unknown zone is 400 naming `tz`.',
});

const statsQuery = {
  from: Type.Optional(
    Type.String({
      format: 'date-time',
      maxLength: 35,
      description:
        'Window start (ISO 8601), rounded down to the start of its bucket (hour; local day, Monday or first of the month). ' +
        'Default: all time, from the creation (or the first click, when imported history is older), or as far back as the bucket limit allows',
    }),
  ),
  to: Type.Optional(
    Type.String({
      format: 'date-time',
      maxLength: 35,
      description: 'Window end, exclusive, rounded up to the end of its bucket. Default: now',
    }),
  ),
  interval: Type.Optional(
    IntervalSchema(
      `Bucket size of the time series, at most ${MAX_BUCKETS} buckets: hour (UTC hours), day, week (ISO, from Monday) or month (calendar), ` +
        'each from local midnight in `tz`. Absent: `day`, or the finest coarser one, `week` then `month`, whose buckets hold the whole window ' +
        '(so a window of years is answered by week or month instead of refused). Weeks and months are sums of the rollups, never of click records',
    ),
  ),
  tz: Type.Optional(Tz),
};
export const LinkStatsQuery = Type.Object({ ...statsQuery, ...domainQuery });
export const UserStatsQuery = Type.Object({
  ...statsQuery,
  domain: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 253,
      pattern: '^[^\\s/:@]+$',
      description:
        "Only the user's links on this domain (the default domain's host name for links without one); deleted links' clicks are then left out",
    }),
  ),
});
export type LinkStatsQueryT = Static<typeof LinkStatsQuery>;
export type StatsQueryT = Static<typeof UserStatsQuery>;

/** What a link's and a user's statistics share (SPEC §15): totals, the window's series and top lists, freshness. */
const common = {
  total_clicks: Count('Lifetime: every click record written so far (human_clicks + bot_clicks)'),
  human_clicks: Count('Lifetime: clicks by people (not recognised as a bot, crawler or unfurler)'),
  bot_clicks: Count(
    'Lifetime: clicks by bots, crawlers, link unfurlers and scripts (isbot), and visits without a User-Agent',
  ),
  unique_visitors: Count(
    'Lifetime: distinct human visitors (by client address; with IP_ANONYMIZE, by a salted hash of the address that changes every UTC day)',
  ),
  first_click_at: Type.Union([Instant, Type.Null()], { description: 'Lifetime; null before the first click' }),
  last_click_at: Type.Union([Instant, Type.Null()], { description: 'Lifetime; null before the first click' }),
  from: Type.String({
    format: 'date-time',
    maxLength: 35,
    description: 'Start of the window the time series and top lists cover (a bucket boundary)',
  }),
  to: Type.String({
    format: 'date-time',
    maxLength: 35,
    description: 'End of that window, exclusive (a bucket boundary)',
  }),
  interval: IntervalSchema('The bucket size of the time series: the one asked for, or the one chosen for the window'),
  tz: Type.String({
    minLength: 1,
    maxLength: 64,
    pattern: NO_CONTROL_CHARACTERS,
    description: 'The time zone the day, week and month buckets follow',
  }),
  timeseries: Type.Array(
    Type.Object(
      { start: Instant, clicks: Count('Human clicks in the bucket'), bots: Count('Bot clicks in the bucket') },
      { additionalProperties: false },
    ),
    {
      maxItems: MAX_BUCKETS,
      description:
        "One entry per bucket of the window, oldest first; buckets without clicks have 0. A day bucket starts at midnight in `tz` (23 or 25 hours long across a daylight-saving change); a week bucket at Monday's, a month bucket at the first's",
    },
  ),
  top_referrers: top(
    'A referrer origin, or (direct) for visits that sent none',
    ' Visits without a Referer count as "(direct)".',
  ),
  top_user_agents: top('A User-Agent header as sent (clipped at 255 characters)'),
  top_browsers: top(
    'A browser family (ua-parser-js), e.g. Chrome, Firefox, Mobile Safari; "(unknown)" when not recognised',
  ),
  top_os: top(
    'An operating system (ua-parser-js), e.g. Windows, Mac OS, iOS, Android; "(unknown)" when not recognised',
  ),
  top_devices: top('desktop, mobile, tablet or other'),
  top_countries: top('An ISO 3166-1 alpha-2 country code, or "(unknown)"'),
  data_fresh_as_of: Type.Union([Instant, Type.Null()], {
    description:
      "Clicks made up to this time are counted: the click writer's last completed flush. Later clicks may still be on their way (CLICK_FLUSH_MS). Null when no writer has flushed yet",
  }),
};

const statsExample = {
  total_clicks: 4,
  human_clicks: 3,
  bot_clicks: 1,
  unique_visitors: 2,
  first_click_at: '2026-11-21T10:15:30.123Z',
  last_click_at: '2026-11-22T08:01:02.000Z',
  from: '2026-11-21T00:00:00.000Z',
  to: '2026-11-23T00:00:00.000Z',
  interval: 'day',
  tz: 'UTC',
  timeseries: [
    { start: '2026-11-21T00:00:00.000Z', clicks: 2, bots: 1 },
    { start: '2026-11-22T00:00:00.000Z', clicks: 1, bots: 0 },
  ],
  top_referrers: [
    { value: 'https://news.example', clicks: 2 },
    { value: '(direct)', clicks: 1 },
  ],
  top_user_agents: [{ value: 'Mozilla/5.0 (X11; Linux x86_64; rv:132.0) Gecko/20100101 Firefox/132.0', clicks: 3 }],
  top_browsers: [{ value: 'Firefox', clicks: 3 }],
  top_os: [{ value: 'Linux', clicks: 3 }],
  top_devices: [{ value: 'desktop', clicks: 3 }],
  top_countries: [
    { value: 'DE', clicks: 2 },
    { value: '(unknown)', clicks: 1 },
  ],
  data_fresh_as_of: '2026-11-22T08:01:03.000Z',
};

/** Entries of by_rule and by_variant at most: 20 rules of up to 10 variants each (SPEC §21). */
export const MAX_CHOICES = 200;
const CHOICE_ID = Type.String({
  minLength: 1,
  maxLength: 64,
  pattern: NO_CONTROL_CHARACTERS,
  description: "The id as the link's rules name it (SPEC §21)",
});
const CHOICES_NOTE =
  'Human visits only, over the whole UTC days of the window, most human clicks first (ties by id), at most 200. Only ids that routed a visit in the window are listed: visits no rule (or no split) chose are in the totals, not here. An id the rules no longer have keeps its entry.';
const choices = <K extends 'rule_id' | 'variant_id'>(id: K, what: string) =>
  Type.Array(
    Type.Object(
      {
        ...({ [id]: CHOICE_ID } as Record<K, typeof CHOICE_ID>),
        human_clicks: Count(`Human clicks the ${what} routed in the window`),
        unique_visitors: Count(
          `Distinct human visitors the ${what} routed in the window (by client address; with IP_ANONYMIZE by the daily hash, so one person on two days counts twice)`,
        ),
      },
      { additionalProperties: false },
    ),
    {
      maxItems: MAX_CHOICES,
      description: `${what === 'rule' ? 'The routing rule that chose the URL' : 'The A/B variant of a split'}: ${CHOICES_NOTE}`,
    },
  );

export const LinkStatsSchema = Type.Object(
  {
    short_code: Type.String({ pattern: CODE_PATTERN, maxLength: 8 }),
    click_count: Count("Lifetime: the link's counter (as in the link record)"),
    ...common,
    by_rule: choices('rule_id', 'rule'),
    by_variant: choices('variant_id', 'variant'),
  },
  {
    $id: 'LinkStats',
    additionalProperties: false,
    examples: [
      {
        short_code: 'aZ3k9QxB',
        click_count: 4,
        ...statsExample,
        by_rule: [{ rule_id: 'r8Kq2', human_clicks: 2, unique_visitors: 2 }],
        by_variant: [
          { variant_id: 'vA1', human_clicks: 1, unique_visitors: 1 },
          { variant_id: 'vB2', human_clicks: 1, unique_visitors: 1 },
        ],
      },
    ],
  },
);
export type LinkStats = Static<typeof LinkStatsSchema>;

export const UserStatsSchema = Type.Object(
  {
    user_id: Type.Integer({
      format: 'int64',
      minimum: 1,
      maximum: Number.MAX_SAFE_INTEGER,
      description: 'Whose links these statistics cover',
    }),
    links: Count("The user's links (that exist now)"),
    ...common,
    total_clicks: Count(
      "Lifetime: every click on the user's links, those deleted or expired since included (human_clicks + bot_clicks)",
    ),
    human_clicks: Count("Lifetime: clicks by people on the user's links, those deleted or expired since included"),
    bot_clicks: Count("Lifetime: clicks by bots on the user's links, those deleted or expired since included"),
    unique_visitors: Count(
      "Lifetime: each existing link's distinct human visitors, added up (someone who visited two of the user's links counts twice)",
    ),
    top_links: Type.Array(
      Type.Object(
        {
          short_code: Type.String({ pattern: CODE_PATTERN, maxLength: 8 }),
          clicks: Count('Human clicks in the window'),
        },
        { additionalProperties: false },
      ),
      {
        maxItems: TOP_VALUES,
        description:
          "The user's links with the most human clicks over the whole UTC days of the window, most first (ties by code), at most 10. At most 100 links are kept per user and day, the first ones clicked that day.",
      },
    ),
  },
  {
    $id: 'UserStats',
    additionalProperties: false,
    description: "Statistics over all of a user's links: the same figures as a link's, summed, plus the top links",
    examples: [{ user_id: 42, links: 2, ...statsExample, top_links: [{ short_code: 'aZ3k9QxB', clicks: 3 }] }],
  },
);
export type UserStats = Static<typeof UserStatsSchema>;

/** v2 (SPEC §9) renames every field to camelCase; the figures are the same. */
export const LinkStatsV2Schema = renameSchemaProperties(LinkStatsSchema, toCamel, 'LinkStatsV2');
export const UserStatsV2Schema = renameSchemaProperties(UserStatsSchema, toCamel, 'UserStatsV2');

export const statsSchemas: TSchema[] = [LinkStatsSchema, UserStatsSchema, LinkStatsV2Schema, UserStatsV2Schema];
