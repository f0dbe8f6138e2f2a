import Type, { type TSchema } from 'typebox';
import type { ClicksTable } from '../../../db/types.js';
import { Id, Instant, isoTime } from '../../../lib/common.schemas.js';
import { DEVICES } from '../event/dimensions.js';

type Row = Pick<ClicksTable, 'clicked_at'> & Record<string, unknown>;

interface ExportedColumn {
  /** the column in `clicks` (selected as is) and the field's v1 name */
  column: keyof ClicksTable;
  /** the field in the JSON record and the CSV header */
  schema: TSchema;
  /** the value as JSON and CSV show it */
  value(row: Row): string | number | boolean | null;
}

// As a request header carried it: no control character but the tab a header may hold.
const HEADER_TEXT = '^[^\\u0000-\\u0008\\u000A-\\u001F\\u007F]*$';
const nullableText = (maxLength: number, description: string) =>
  Type.Union([Type.String({ maxLength, pattern: HEADER_TEXT }), Type.Null()], { description });
const nullableName = (description: string) =>
  Type.Union([Type.String({ maxLength: 64, pattern: HEADER_TEXT }), Type.Null()], { description });
const asIs = (column: keyof ClicksTable) => (row: Row) => (row[column] ?? null) as string | number | boolean | null;

/**
 * What a click record exports (GET /links/{code}/clicks, JSON and CSV), in this order (a new column goes before
 * `domain`, which readers of the CSV take as the last). One line per column: the JSON schema, the CSV header
 * and the SELECT list all come from here.
 */
export const CLICK_RECORD_COLUMNS: readonly ExportedColumn[] = [
  { column: 'id', schema: Id(), value: asIs('id') },
  { column: 'clicked_at', schema: Instant(), value: (row) => isoTime(Number(row.clicked_at)) },
  { column: 'ip', schema: nullableText(45, 'The client address (TRUST_PROXY-aware)'), value: asIs('ip') },
  { column: 'user_agent', schema: nullableText(512, 'As sent, clipped to 512 characters'), value: asIs('user_agent') },
  { column: 'referrer', schema: nullableText(2048, 'As sent, clipped to 2048 characters'), value: asIs('referrer') },
  {
    column: 'is_bot',
    schema: Type.Boolean({ description: 'A bot, crawler, link unfurler or script (isbot), or no User-Agent' }),
    value: (row) => Number(row.is_bot) === 1,
  },
  {
    column: 'browser',
    schema: nullableName('Browser family (ua-parser-js); null when not recognised'),
    value: asIs('browser'),
  },
  {
    column: 'os',
    schema: nullableName('Operating system (ua-parser-js); null when not recognised'),
    value: asIs('os'),
  },
  {
    column: 'device',
    schema: Type.Union([...DEVICES.map((d) => Type.Literal(d)), Type.Null()], {
      description: 'desktop, mobile, tablet, bot or other; null for records older than the analytics',
    }),
    value: asIs('device'),
  },
  {
    column: 'country',
    schema: Type.Union([Type.String({ pattern: '^[A-Z]{2}$', minLength: 2, maxLength: 2 }), Type.Null()], {
      description: "ISO 3166-1 alpha-2, from a trusted proxy's COUNTRY_HEADER or GEOIP_DATABASE; null when unknown",
    }),
    value: asIs('country'),
  },
  {
    column: 'alias',
    schema: Type.Union([Type.String({ pattern: '^[0-9a-zA-Z_-]{1,64}$', maxLength: 64 }), Type.Null()], {
      description: "The link's alias the visit came through (SPEC §20); null: through its code",
    }),
    value: asIs('alias'),
  },
  {
    column: 'imported',
    schema: Type.Boolean({
      description:
        "Brought over from another service by an import (SPEC §20), on the visit's own date; false: a visit this instance redirected",
    }),
    value: (row) => Number(row.imported) === 1,
  },
  {
    column: 'rule_id',
    schema: Type.Union([Type.String({ minLength: 1, maxLength: 64, pattern: HEADER_TEXT }), Type.Null()], {
      description: "The routing rule that chose the URL (SPEC §21); null: none chose (the link's original_url)",
    }),
    value: asIs('rule_id'),
  },
  {
    column: 'variant_id',
    schema: Type.Union([Type.String({ minLength: 1, maxLength: 64, pattern: HEADER_TEXT }), Type.Null()], {
      description: 'The A/B variant of the split the visit was sent to (SPEC §21); null: none',
    }),
    value: asIs('variant_id'),
  },
  {
    column: 'domain',
    schema: Type.Union([Type.String({ minLength: 1, maxLength: 253, pattern: '^[a-z0-9.-]+$' }), Type.Null()], {
      description: 'The domain the visit came in on (its host name); null: the default domain (SPEC §19)',
    }),
    value: asIs('domain'),
  },
];
