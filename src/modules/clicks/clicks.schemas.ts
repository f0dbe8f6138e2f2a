import Type, { type Static } from 'typebox';
import { Count, Instant as instant, NO_CONTROL_CHARACTERS } from '../../lib/common.schemas.js';
import { CODE_PATTERN } from '../links/short-code.js';

const Instant = instant();
const Clicks = Count('Clicks');
const ValueCount = Type.Object(
  { value: Type.String({ maxLength: 2048, pattern: NO_CONTROL_CHARACTERS, description: 'A referrer origin or a user agent, as counted' }), clicks: Clicks },
  { additionalProperties: false },
);

/** More buckets than this in one answer is a 400: the client asks for a narrower window or a coarser interval. */
export const MAX_BUCKETS = 1000;
export const TOP_VALUES = 10;

export const LinkStatsQuery = Type.Object({
  from: Type.Optional(Type.String({ format: 'date-time', maxLength: 35, description: 'Window start (ISO 8601), rounded down to a whole UTC hour/day. Default: the link\'s creation, or as far back as the bucket limit allows' })),
  to: Type.Optional(Type.String({ format: 'date-time', maxLength: 35, description: 'Window end, exclusive, rounded up to a whole UTC hour/day. Default: now' })),
  interval: Type.Optional(Type.Union([Type.Literal('hour'), Type.Literal('day')], { default: 'day', description: `Bucket size of the time series (at most ${MAX_BUCKETS} buckets)` })),
});
export type LinkStatsQueryT = Static<typeof LinkStatsQuery>;

export const LinkStatsSchema = Type.Object(
  {
    short_code: Type.String({ pattern: CODE_PATTERN, maxLength: 8 }),
    total_clicks: Count('Lifetime: exactly the number of click records written so far'),
    click_count: Count("Lifetime: the link's counter (as in the link record)"),
    unique_visitors: Count('Lifetime: distinct client IP addresses'),
    first_click_at: Type.Union([Instant, Type.Null()], { description: 'Lifetime; null before the first click' }),
    last_click_at: Type.Union([Instant, Type.Null()], { description: 'Lifetime; null before the first click' }),
    from: Type.String({ format: 'date-time', maxLength: 35, description: 'Start of the window the time series and top lists cover (a bucket boundary)' }),
    to: Type.String({ format: 'date-time', maxLength: 35, description: 'End of that window, exclusive (a bucket boundary)' }),
    interval: Type.Union([Type.Literal('hour'), Type.Literal('day')]),
    timeseries: Type.Array(Type.Object({ start: Instant, clicks: Clicks }, { additionalProperties: false }), {
      maxItems: MAX_BUCKETS,
      description: 'One entry per bucket of the window, oldest first; buckets without clicks have 0',
    }),
    top_referrers: Type.Array(ValueCount, {
      maxItems: TOP_VALUES,
      description: 'Referrer origins over the whole UTC days of the window, most clicks first. At most 100 distinct values are kept per link and day; later new ones count as "(other)".',
    }),
    top_user_agents: Type.Array(ValueCount, { maxItems: TOP_VALUES, description: 'User agents, counted like top_referrers' }),
  },
  {
    $id: 'LinkStats',
    additionalProperties: false,
    examples: [
      {
        short_code: 'aZ3k9QxB', total_clicks: 3, click_count: 3, unique_visitors: 2,
        first_click_at: '2026-11-21T10:15:30.123Z', last_click_at: '2026-11-22T08:01:02.000Z',
        from: '2026-11-21T00:00:00.000Z', to: '2026-11-23T00:00:00.000Z', interval: 'day',
        timeseries: [{ start: '2026-11-21T00:00:00.000Z', clicks: 2 }, { start: '2026-11-22T00:00:00.000Z', clicks: 1 }],
        top_referrers: [{ value: 'https://news.example', clicks: 2 }],
        top_user_agents: [{ value: 'Mozilla/5.0 (X11; Linux x86_64)', clicks: 3 }],
      },
    ],
  },
);
export type LinkStats = Static<typeof LinkStatsSchema>;

export const clickSchemas = [LinkStatsSchema];
