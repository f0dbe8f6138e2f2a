import Type, { type Static } from 'typebox';
import { Count, Id, Instant as instant, NO_CONTROL_CHARACTERS } from '../../lib/common.schemas.js';

const Instant = instant();
const HOST_NAME = '(default|[A-Za-z0-9]([A-Za-z0-9.-]{0,251}[A-Za-z0-9])?)';
const HOST = `^${HOST_NAME}$`;

const Source = Type.Union(
  [
    Type.Literal('shlink'),
    Type.Literal('kutt'),
    Type.Literal('yourls'),
    Type.Literal('bitly'),
    Type.Literal('dub'),
    Type.Literal('csv'),
  ],
  { description: 'Where the links come from' },
);
const OnConflict = Type.Union([Type.Literal('skip'), Type.Literal('fail')], {
  description: 'A code taken in Ferry: skip the item (listed), or stop the import. Default skip',
});
const DomainMap = Type.Record(
  Type.String({ pattern: HOST, maxLength: 253 }),
  Type.String({ pattern: HOST, maxLength: 253 }),
  {
    maxProperties: 100,
    description:
      "The source's domain → Ferry's (`default` stands for a default domain). Without it, a source's default domain lands on Ferry's",
  },
);
/** Text as a source or the importer wrote it, returned as it is (any character). */
const ANY_TEXT = '^[\\s\\S]*$';
const Text = (maxLength: number, description: string) =>
  Type.String({ minLength: 1, maxLength, pattern: NO_CONTROL_CHARACTERS, description });

export const ImportCreateSchema = Type.Object(
  {
    source: Source,
    url: Type.Optional(
      Text(
        2048,
        'The API of Shlink, Kutt or Bitly (a group: https://api-ssl.bitly.com/v4/groups/{group_guid}); private and loopback addresses are allowed',
      ),
    ),
    api_key: Type.Optional(
      Text(512, 'The source API key (Shlink, Kutt) or bearer token (Bitly); used for this import only, never stored'),
    ),
    database: Type.Optional(Text(2048, 'YOURLS: mysql://user:password@host:port/database')),
    table_prefix: Type.Optional(
      Type.String({
        pattern: '^[A-Za-z0-9_]{0,32}$',
        maxLength: 32,
        description: "YOURLS's table prefix (default yourls_)",
      }),
    ),
    owner: Type.Optional(Text(64, 'The username that owns the imported links (default: the oldest active admin)')),
    dry_run: Type.Optional(Type.Boolean({ description: 'Report what would happen; write no link' })),
    on_conflict: Type.Optional(OnConflict),
    domain_map: Type.Optional(DomainMap),
  },
  {
    $id: 'ImportCreate',
    additionalProperties: false,
    examples: [{ source: 'shlink', url: 'http://10.0.0.5:8080', api_key: 'e1f…', owner: 'alice' }],
  },
);
export type ImportCreate = Static<typeof ImportCreateSchema>;

export const ImportCsvQuery = Type.Object({
  source: Type.Optional(
    Type.Union([Type.Literal('csv'), Type.Literal('bitly'), Type.Literal('dub')], {
      description: 'For a text/csv body: its format (default csv)',
    }),
  ),
  owner: Type.Optional(Text(64, 'For a text/csv body: the owner (default: the oldest active admin)')),
  dry_run: Type.Optional(Type.Boolean({ description: 'For a text/csv body: report only' })),
  on_conflict: Type.Optional(OnConflict),
  domain_map: Type.Optional(
    Type.Array(Type.String({ pattern: `^${HOST_NAME}=${HOST_NAME}$`, maxLength: 507 }), {
      maxItems: 100,
      description:
        "For a text/csv body: FROM=TO, repeated, as the JSON body's domain_map (`default` for a default domain)",
    }),
  ),
});

const Counts = Type.Object(
  {
    items: Count('Source items read'),
    created: Count('Links created (dry run: that would be)'),
    unchanged: Count('Items this source brought before'),
    conflicts: Count('Items whose code is taken in Ferry'),
    failed: Count('Items that cannot become a link'),
    visits: Count('Visit records brought over'),
    visits_skipped: Count('Visit records left out: dated outside 1970-9999, or with a date that cannot be read'),
  },
  { additionalProperties: false },
);

const ImportItemSchema = Type.Object(
  {
    seq: Count("The item's place in the source, from 1"),
    source: Type.String({
      maxLength: 600,
      pattern: ANY_TEXT,
      description: 'The item as the source names it: domain/code, or a line of a CSV file',
    }),
    outcome: Type.Union([
      Type.Literal('created'),
      Type.Literal('unchanged'),
      Type.Literal('conflict'),
      Type.Literal('failed'),
      Type.Literal('would-create'),
    ]),
    short_code: Type.Union([Type.String({ maxLength: 64, pattern: '^[0-9a-zA-Z_-]{1,64}$' }), Type.Null()], {
      description: "Ferry's code of the link",
    }),
    message: Type.Union([Type.String({ maxLength: 1000, pattern: ANY_TEXT }), Type.Null()], {
      description: 'Why, or what could not come over',
    }),
    error_code: Type.Union([Type.String({ maxLength: 32, pattern: '^[A-Z_]+$' }), Type.Null()], {
      description:
        'A failed item or a conflict: the error code the API would answer for the same link (VALIDATION_ERROR, DESTINATION_BLOCKED, DOMAIN_NOT_OWNED, CONFLICT)',
    }),
    visits: Count(
      'Visit records (or, for a source that only counts visits, visits counted) this run brought to the link: for an item imported before, the new ones',
    ),
  },
  { additionalProperties: false },
);

export const ImportJobSchema = Type.Object(
  {
    id: Id(),
    source: Source,
    state: Type.Union(
      [
        Type.Literal('running'),
        Type.Literal('done'),
        Type.Literal('failed'),
        Type.Literal('interrupted'),
        Type.Literal('cancelled'),
      ],
      {
        description:
          '`interrupted`: the process running it stopped (`error` says how to go on: the same import again); `cancelled`: by DELETE',
      },
    ),
    dry_run: Type.Boolean(),
    on_conflict: OnConflict,
    owner_id: Type.Union([Id(), Type.Null()]),
    progress: Counts,
    error: Type.Union([Type.String({ maxLength: 1000, pattern: ANY_TEXT }), Type.Null()], {
      description: 'Why the import stopped early (failed, interrupted, cancelled), and how to go on',
    }),
    items: Type.Array(ImportItemSchema, {
      maxItems: 1000,
      description:
        'Items that were not simply created, that lost something, or (imported before) that got new visits (at most 1000, in source order)',
    }),
    created_at: Instant,
    updated_at: Instant,
    finished_at: Type.Union([Instant, Type.Null()]),
  },
  { $id: 'ImportJob', additionalProperties: false },
);
export type ImportJob = Static<typeof ImportJobSchema>;

export const ImportJobParams = Type.Object({ id: Id() }, { additionalProperties: false });

export const importSchemas = [ImportCreateSchema, ImportJobSchema];
