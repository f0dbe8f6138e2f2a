/**
 * Every environment variable Ferry reads, declared once (SPEC §11): a TypeBox schema of its value with its
 * default, bounds, description and, for a secret, `secret: true` (the options are explained in
 * src/lib/env-variables.ts). Some sections are declared in src/config/ and spread here in their place, so the
 * order below is the order of the docs' table. Read once at start-up into a typed, frozen object that is passed
 * down; nothing else in src/ touches process.env.
 *
 * From `variables` come the typed Config (each NAME_LIKE_THIS becomes `nameLikeThis`), the start-up errors
 * (one line per bad variable) and the table in docs/configuration.md: after adding or changing a variable,
 * run `npm run docs:config` (test/config-docs.test.ts fails while the table and this file disagree).
 */
import Type, { type Static, type TSchema } from 'typebox';
import { eventsVariables } from './config/events.variables.js';
import { visitorVariables } from './config/visitor.variables.js';
import { hardeningVariables } from './config/hardening.variables.js';
import { linkCheckVariables } from './config/link-checks.variables.js';
import { loadVariables } from './config/load.variables.js';
import { oidcProblems, oidcVariables } from './config/oidc.variables.js';
import { webhooksVariables } from './config/webhooks.variables.js';
import { openInstanceVariables } from './config/open-instance.variables.js';
import { signInVariables } from './config/sign-in.variables.js';
import { versioningVariables } from './config/versioning.variables.js';
import { flag, int, optional, readVariable, shownValue } from './lib/env-variables.js';

/**
 * CLICK_QUEUE_LIMIT's defaults. On the embedded engine (no DATABASE_URL, with or without REDIS_URL) the clicks waiting are
 * also the writer thread's next window (sqlite-click-writer.ts takes up to 500,000 at once, and the more it
 * takes, the less a click costs it): a backlog can only make windows that large if the queue may hold them. A
 * click waiting takes about 65 bytes of heap and columns (measured: 100 bytes of RSS), so 1,000,000 is about
 * 100 MB, held only while the writer is behind; the journal holds the same clicks on disk. Elsewhere 100,000:
 * the PostgreSQL writer and the stream's consumers write batches of CLICK_BATCH_SIZE, which gain nothing from a
 * longer queue, and a shutdown flushes the in-process queue within SHUTDOWN_TIMEOUT_MS. With PostgreSQL and
 * Redis (the stream) 4,000,000: a worker outage of two minutes at 30,000 clicks/s (issue 37: the rate the
 * workers are held to, above the redirect of one instance on this machine) loses nothing; it costs Redis
 * about 293 bytes per entry waiting (MEMORY USAGE, docs/deployment.md), 1.1 GiB when full, nothing once the
 * workers are back (the stream is trimmed to its backlog).
 */
const EMBEDDED_QUEUE_LIMIT = 1_000_000;
const QUEUE_LIMIT = 100_000;
const STREAM_QUEUE_LIMIT = 4_000_000;

export const variables = {
  PORT: int(3000, 0, 65535, 'TCP port'),
  HOST: Type.String({ default: '127.0.0.1', description: 'Listen address' }),
  DATA_DIR: Type.String({
    default: './data',
    description: 'SQLite database, click journal and the generated JWT secret (created if missing)',
  }),
  PUBLIC_BASE_URL: optional(Type.String({ read: 'httpUrl' }), {
    description: 'Absolute base of `short_url` and the OpenAPI `servers` entry',
    documentedDefault: '`http://HOST:PORT`',
  }),
  DATABASE_URL: optional(
    Type.String({
      pattern: '^postgres(ql)?://',
      must: 'be a postgres:// URL (or unset for the embedded SQLite database)',
    }),
    {
      description: 'A `postgres://` URL switches storage to PostgreSQL',
    },
  ),
  REDIS_URL: optional(Type.String({ pattern: '^rediss?://', must: 'be a redis:// or rediss:// URL' }), {
    description: 'A `redis://` URL moves rate limits, caches and the click queue to Redis',
  }),
  REDIS_KEY_PREFIX: Type.String({
    default: 'ferry:',
    pattern: '^[A-Za-z0-9:._-]{1,64}$',
    must: 'be 1-64 characters of A-Z a-z 0-9 : . _ -',
    description: 'Prefix of every Redis key and channel (several deployments can share one Redis)',
  }),
  JWT_SECRET: optional(Type.String({ minBytes: 32 }), {
    secret: true,
    documentedDefault: 'generated',
    description:
      'HS256 key. Unset: a random key is generated on first start and kept in `DATA_DIR/jwt-secret`. Several instances must share one.',
  }),
  TOKEN_TTL_SECONDS: int(3600, 60, 60 * 60 * 24 * 30, 'Access-token lifetime in seconds'),
  ADMIN_USERNAME: optional(
    Type.String({ pattern: '^[A-Za-z0-9._-]{3,32}$', must: 'be 3-32 characters of A-Z a-z 0-9 . _ -' }),
    {
      description: 'With `ADMIN_PASSWORD` (set both or neither): this active admin exists after start-up',
    },
  ),
  ADMIN_PASSWORD: optional(Type.String({ minLength: 8, maxLength: 128 }), {
    secret: true,
    description: 'The password of `ADMIN_USERNAME`',
  }),
  REDIRECT_STATUS: Type.Enum([301, 302, 307, 308], {
    default: 302,
    description: 'Status of the redirect `GET /{code}`',
  }),
  RATE_LIMIT_PER_MINUTE: int(600, 1, 1_000_000, 'Requests per caller per minute'),
  TOKEN_RATE_LIMIT_PER_MINUTE: int(10, 1, 1_000_000, '`POST /api/v1/tokens` per IP and username per minute'),
  REDIRECT_RATE_LIMIT_PER_MINUTE: int(6000, 1, 10_000_000, 'Redirects per client IP per minute'),
  TRUST_PROXY: Type.Union([Type.Boolean(), Type.Integer(), Type.String()], {
    default: false,
    read: 'trustProxy',
    description: 'The proxies whose `X-Forwarded-For` gives the client address',
  }),
  CORS_ORIGINS: Type.Array(Type.String(), {
    default: [],
    read: 'origins',
    description: 'Origins allowed by CORS (`*` for any)',
  }),
  BODY_LIMIT_BYTES: int(65536, 1024, 100 * 1024 * 1024, 'Largest request body; larger is 413'),
  IDEMPOTENCY_TTL_SECONDS: int(86400, 1, 60 * 60 * 24 * 30, 'How long `Idempotency-Key`s are remembered'),
  IDEMPOTENCY_LOCK_TIMEOUT_MS: int(
    60_000,
    1_000,
    3_600_000,
    'A key held by a request that died (instance killed) can be taken over after this',
  ),
  CLICK_FLUSH_MS: int(1000, 10, 60_000, 'Click batch interval'),
  CLICK_JOURNAL: flag(
    true,
    'Embedded engine: a redirect answers only once its click is appended to the journal in `DATA_DIR/click-journal` (survives a process kill). `false`: clicks wait in memory only',
  ),
  CLICK_BATCH_SIZE: int(
    1000,
    1,
    100_000,
    "Clicks written per batch at most (PostgreSQL writer, stream consumer); the embedded engine's writer thread takes windows of up to 500,000 instead",
  ),
  CLICK_QUEUE_LIMIT: optional(Type.Integer({ minimum: 100, maximum: 10_000_000 }), {
    documentedDefault:
      '`1000000` on the embedded engine (with or without `REDIS_URL`), `4000000` with `DATABASE_URL` and `REDIS_URL`, `100000` with `DATABASE_URL` alone',
    description:
      "Click queue bound: the in-process queue, or with Redis the stream's backlog (beyond it clicks are dropped and counted). On the embedded engine it also bounds the writer's windows: about 100 bytes of memory per click waiting, held only while the writer is behind. The stream's default rides out a two-minute worker outage at 30,000 clicks/s: about 293 bytes of Redis per click waiting (1.1 GiB when full)",
  }),
  CLICK_WORKER_IN_PROCESS: flag(
    true,
    'With `REDIS_URL`: API processes also consume the Redis click stream, so `npm start` alone counts every click; `false` leaves it to `npm run worker`',
  ),
  CLICK_CLAIM_IDLE_MS: int(
    30_000,
    500,
    3_600_000,
    'Click-stream entries a consumer held unacknowledged this long are claimed by another',
  ),
  CLICK_RETENTION_MONTHS: int(
    0,
    0,
    1200,
    'PostgreSQL: monthly click partitions older than this are dropped (statistics stay); `0` keeps them all',
  ),
  LINK_CACHE_SIZE: int(
    1_000_000,
    0,
    10_000_000,
    'Short codes the redirect keeps in memory at most (`0`: no cache, every visit reads the database); `LINK_CACHE_BYTES` bounds them first',
  ),
  LINK_CACHE_BYTES: int(
    28 * 1024 * 1024,
    0,
    16 * 1024 * 1024 * 1024,
    "The redirect's link cache's memory, estimated per entry: " +
      "120 bytes plus the code's and the URL's characters for a link visited by its code on the default domain " +
      'with nothing but a destination (180 bytes with a 52-character URL: the default holds about 164,000 such links), ' +
      "384 bytes plus its strings' characters for any other link, " +
      "128 bytes plus the code's for an unknown code (`0`: no cache)",
  ),
  LINK_PASSWORD_ATTEMPTS_PER_MINUTE: int(
    5,
    1,
    1000,
    'Wrong passwords per password-protected link and client address per minute (then 429); shared in Redis with `REDIS_URL`',
  ),
  MAINTENANCE_MODE: flag(false, '`true`: the API answers 503; redirects keep working'),
  LOG_LEVEL: Type.Enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], {
    default: 'info',
    description: 'pino level',
  }),
  DB_POOL_MAX: int(10, 1, 1000, 'PostgreSQL pool size per instance'),
  PASSWORD_HASH_COST: int(
    15,
    10,
    20,
    'scrypt cost as log2 N; stored with each hash; a changed cost applies to new passwords and to each existing one at its next good login (rehash)',
  ),
  ...versioningVariables,
  ...loadVariables,
  WEB_DIR: optional(Type.String(), {
    documentedDefault: '`dist/web` of this package',
    description:
      'The built dashboard (`index.html` and `assets/`) served at `/app`; not built there: `/app` answers 503',
  }),
  ...visitorVariables,
  ...openInstanceVariables,
  ...oidcVariables,
  ...signInVariables,
  ...hardeningVariables,
  ...webhooksVariables,
  ...eventsVariables,
  ...linkCheckVariables,
} satisfies Record<string, TSchema>;

type Values = { [K in keyof typeof variables]: Static<(typeof variables)[K]> };
/** NAME_LIKE_THIS → nameLikeThis, the key of a variable's value in Config. */
type CamelCase<S extends string> = S extends `${infer H}_${infer T}`
  ? `${Lowercase<H>}${Capitalize<CamelCase<T>>}`
  : Lowercase<S>;
const camelCase = (name: string) => name.toLowerCase().replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());
/** Variables whose values reach Config through a field of another name or shape (loadConfig, at its end). */
const derived = [
  'PUBLIC_BASE_URL',
  'CLICK_QUEUE_LIMIT',
  ...[1, 2].flatMap((n) => ['DEPRECATED_AT', 'SUNSET_AT', 'DEPRECATION_LINK'].map((s) => `API_V${n}_${s}`)),
];
type Derived =
  'PUBLIC_BASE_URL' | 'CLICK_QUEUE_LIMIT' | `API_V${1 | 2}_${'DEPRECATED_AT' | 'SUNSET_AT' | 'DEPRECATION_LINK'}`;
type Plain = Omit<Values, Derived>;

export type Config = { [K in keyof Plain as CamelCase<K>]: Plain[K] } & {
  /** PUBLIC_BASE_URL, or http://HOST:PORT */
  publicBaseUrl: string;
  /** whether PUBLIC_BASE_URL was set: the CLI serves on no port, so without it the default domain's URL is unknown there */
  publicBaseUrlSet: boolean;
  /** CLICK_QUEUE_LIMIT, or its engine's default */
  clickQueueLimit: number;
  /** Deprecation signals per API version (SPEC §9); null where the version is not deprecated. */
  apiDeprecation: Record<1 | 2, { deprecatedAt: number | null; sunsetAt: number | null; link: string | null }>;
};
export type RedirectStatus = Config['redirectStatus'];
export type LogLevel = Config['logLevel'];
/** Who may sign up (SPEC §18). */
export type Registration = Config['registration'];
export const REGISTRATION_MODES: readonly Registration[] = ['approval', 'open', 'closed'];

export class ConfigError extends Error {
  override name = 'ConfigError';
}

type Env = Record<string, string | undefined>;

/** Each variable's value, and one line for each set to a value its schema refuses. */
function readVariables(env: Env): { values: Values; problems: string[] } {
  const problems: string[] = [];
  const values: Record<string, unknown> = {};
  for (const [name, schema] of Object.entries(variables) as [string, TSchema & { default?: unknown }][]) {
    const raw = env[name];
    try {
      values[name] = raw === undefined ? schema.default : readVariable(schema, raw);
    } catch (err) {
      problems.push(`${name}=${shownValue(schema, raw ?? '')}: ${(err as Error).message}`);
    }
  }
  return { values: values as Values, problems };
}

/** Rules across variables (`v` lacks the variables refused on their own, `allValid` says none was). */
function crossProblems(v: Partial<Values>, allValid: boolean): string[] {
  const problems: string[] = [];
  if (allValid && (v.ADMIN_USERNAME === null) !== (v.ADMIN_PASSWORD === null))
    problems.push('ADMIN_USERNAME and ADMIN_PASSWORD: set both or neither');
  for (const n of [1, 2] as const) {
    const dep = v[`API_V${n}_DEPRECATED_AT`];
    const sunset = v[`API_V${n}_SUNSET_AT`];
    // RFC 9745 §4: Sunset must not be earlier than Deprecation.
    if (dep != null && sunset != null && sunset < dep)
      problems.push(`API_V${n}_SUNSET_AT: must not be earlier than API_V${n}_DEPRECATED_AT`);
  }
  problems.push(...oidcProblems(v));
  if (allValid && v.HEADERS_TIMEOUT_MS! > v.REQUEST_TIMEOUT_MS!)
    problems.push('HEADERS_TIMEOUT_MS must not be greater than REQUEST_TIMEOUT_MS');
  return problems;
}

/**
 * Reads the environment. Every bad variable is reported, one per line, each naming the variable and what
 * is allowed; a ConfigError carries them all so server.ts can print them and exit 1.
 */
export function loadConfig(env: Env = {}): Config {
  const { values: v, problems } = readVariables(env);
  problems.push(...crossProblems(v, problems.length === 0));
  if (problems.length > 0) throw new ConfigError(problems.map((p) => `Invalid configuration: ${p}`).join('\n'));

  const plain: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(v)) if (!derived.includes(name)) plain[camelCase(name)] = value;
  const displayHost = v.HOST.includes(':') ? `[${v.HOST}]` : v.HOST === '0.0.0.0' ? '127.0.0.1' : v.HOST;
  return Object.freeze({
    ...(plain as Omit<Config, 'publicBaseUrl' | 'publicBaseUrlSet' | 'clickQueueLimit' | 'apiDeprecation'>),
    publicBaseUrl: v.PUBLIC_BASE_URL ?? `http://${displayHost}:${v.PORT}`,
    publicBaseUrlSet: v.PUBLIC_BASE_URL !== null,
    // The engine decides, as it decides the queue (modules/clicks/click-ingest.ts): SQLite with REDIS_URL still journals
    // its clicks and writes them in windows.
    clickQueueLimit:
      v.CLICK_QUEUE_LIMIT ??
      (v.DATABASE_URL === null ? EMBEDDED_QUEUE_LIMIT : v.REDIS_URL === null ? QUEUE_LIMIT : STREAM_QUEUE_LIMIT),
    apiDeprecation: {
      1: { deprecatedAt: v.API_V1_DEPRECATED_AT, sunsetAt: v.API_V1_SUNSET_AT, link: v.API_V1_DEPRECATION_LINK },
      2: { deprecatedAt: v.API_V2_DEPRECATED_AT, sunsetAt: v.API_V2_SUNSET_AT, link: v.API_V2_DEPRECATION_LINK },
    },
  });
}
