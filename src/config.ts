/**
 * Every environment variable Ferry reads, in one schema (SPEC §11). Read once at start-up into a typed,
 * frozen object that is passed down; nothing else in src/ touches process.env.
 */
import { getHeapStatistics } from 'node:v8';

export type RedirectStatus = 301 | 302 | 307 | 308;
export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';

export interface Config {
  port: number;
  host: string;
  dataDir: string;
  publicBaseUrl: string;
  databaseUrl: string | null;
  redisUrl: string | null;
  jwtSecret: string | null;
  tokenTtlSeconds: number;
  adminUsername: string | null;
  adminPassword: string | null;
  redirectStatus: RedirectStatus;
  rateLimitPerMinute: number;
  tokenRateLimitPerMinute: number;
  redirectRateLimitPerMinute: number;
  trustProxy: boolean | string | number;
  corsOrigins: string[];
  bodyLimitBytes: number;
  idempotencyTtlSeconds: number;
  /** a key whose request died (its instance was killed) can be taken over after this long */
  idempotencyLockTimeoutMs: number;
  clickFlushMs: number;
  /** CLICK_JOURNAL: on the embedded engine, an answered redirect's click is first appended to a journal in DATA_DIR */
  clickJournal: boolean;
  clickBatchSize: number;
  clickQueueLimit: number;
  /** LINK_CACHE_SIZE: codes the redirect keeps in memory (0: none, every visit reads the database) */
  linkCacheSize: number;
  /** wrong passwords per password-protected link and client address per minute */
  linkPasswordAttemptsPerMinute: number;
  maintenanceMode: boolean;
  logLevel: LogLevel;
  dbPoolMax: number;
  passwordHashCost: number;
  /** scale-out (docs/deployment.md): prefix of every Redis key and channel */
  redisKeyPrefix: string;
  /** run a click-stream consumer inside this API process (default: yes without REDIS_URL, no with it) */
  clickWorkerInProcess: boolean;
  /** a click-stream entry unacknowledged this long by its consumer is claimed by another */
  clickClaimIdleMs: number;
  /** PostgreSQL: monthly click partitions older than this many months are dropped (0 keeps them all) */
  clickRetentionMonths: number;
  /** Deprecation signals per API version (SPEC §9); null where the version is not deprecated. */
  apiDeprecation: Record<1 | 2, { deprecatedAt: number | null; sunsetAt: number | null; link: string | null }>;
  /** 0 disables a bound (see plugins/overload.ts) */
  overloadMaxEventLoopDelayMs: number;
  overloadMaxElu: number;
  overloadMaxHeapBytes: number;
  overloadSampleIntervalMs: number;
  shutdownTimeoutMs: number;
  headersTimeoutMs: number;
  requestTimeoutMs: number;
  /** WEB_DIR: the built dashboard (index.html + assets/); null: this package's dist/web */
  webDir: string | null;
  /** COUNTRY_HEADER: the request header a trusted proxy puts the visitor's country in (e.g. CF-IPCountry), lower case; null: none */
  countryHeader: string | null;
  /** GEOIP_DATABASE: path of an offline MaxMind country/city database (.mmdb); null: none */
  geoipDatabase: string | null;
  /** IP_ANONYMIZE: click records keep IPv4 /24 and IPv6 /48; unique visitors from a salted daily hash */
  ipAnonymize: boolean;
}

export class ConfigError extends Error {
  override name = 'ConfigError';
}

type Env = Record<string, string | undefined>;

/** One variable: its default and how a raw string becomes a value (throwing a readable reason). */
interface Spec<T> {
  default: T;
  parse: (raw: string) => T;
}

const int = (min: number, max: number): Spec<number>['parse'] => (raw) => {
  if (!/^\d+$/.test(raw)) throw new Error(`must be an integer between ${min} and ${max}`);
  const n = Number(raw);
  if (n < min || n > max) throw new Error(`must be an integer between ${min} and ${max}`);
  return n;
};

const bool: Spec<boolean>['parse'] = (raw) => {
  const v = raw.trim().toLowerCase();
  if (['1', 'true', 'yes', 'on'].includes(v)) return true;
  if (['0', 'false', 'no', 'off', ''].includes(v)) return false;
  throw new Error('must be true or false');
};

const fraction: Spec<number>['parse'] = (raw) => {
  if (!/^(0(\.\d+)?|1(\.0+)?)$/.test(raw.trim())) throw new Error('must be a number between 0 and 1 (0 disables)');
  return Number(raw);
};

const nonEmpty: Spec<string>['parse'] = (raw) => {
  if (raw.trim() === '') throw new Error('must not be empty');
  return raw;
};

const httpUrl: Spec<string>['parse'] = (raw) => {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    throw new Error('must be an absolute http(s) URL');
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error('must be an absolute http(s) URL');
  return raw.replace(/\/+$/, '');
};

const instant: Spec<number>['parse'] = (raw) => {
  const ms = Date.parse(raw);
  if (!/^\d{4}-\d\d-\d\d/.test(raw) || Number.isNaN(ms)) throw new Error('must be an ISO 8601 date or date-time, e.g. 2027-01-01T00:00:00Z');
  return ms;
};

const optional = <T>(parse: (raw: string) => T): Spec<T | null> => ({
  default: null,
  parse: (raw) => (raw === '' ? null : parse(raw)),
});

/**
 * CLICK_QUEUE_LIMIT's defaults. On the embedded engine (no DATABASE_URL, with or without REDIS_URL) the clicks waiting are
 * also the writer thread's next window (sqlite-click-writer.ts takes up to 500,000 at once, and the more it
 * takes, the less a click costs it): a backlog can only make windows that large if the queue may hold them. A
 * click waiting takes about 65 bytes of heap and columns (measured: 100 bytes of RSS), so 1,000,000 is about
 * 100 MB, held only while the writer is behind; the journal holds the same clicks on disk. Elsewhere 100,000:
 * the PostgreSQL writer and the stream's consumers write batches of CLICK_BATCH_SIZE, which gain nothing from a
 * longer queue, and a shutdown flushes the in-process queue within SHUTDOWN_TIMEOUT_MS (about 230 bytes per
 * entry in Redis, docs/deployment.md).
 */
const EMBEDDED_QUEUE_LIMIT = 1_000_000;
const QUEUE_LIMIT = 100_000;

const specs = {
  PORT: { default: 3000, parse: int(0, 65535) },
  HOST: { default: '127.0.0.1', parse: nonEmpty },
  DATA_DIR: { default: './data', parse: nonEmpty },
  PUBLIC_BASE_URL: optional(httpUrl),
  DATABASE_URL: optional((raw) => {
    if (!/^postgres(ql)?:\/\//.test(raw)) throw new Error('must be a postgres:// URL (or unset for the embedded SQLite database)');
    return raw;
  }),
  REDIS_URL: optional((raw) => {
    if (!/^rediss?:\/\//.test(raw)) throw new Error('must be a redis:// or rediss:// URL');
    return raw;
  }),
  JWT_SECRET: optional((raw) => {
    if (Buffer.byteLength(raw, 'utf8') < 32) throw new Error('must be at least 32 bytes long');
    return raw;
  }),
  TOKEN_TTL_SECONDS: { default: 3600, parse: int(60, 60 * 60 * 24 * 30) },
  ADMIN_USERNAME: optional((raw) => {
    if (!/^[A-Za-z0-9._-]{3,32}$/.test(raw)) throw new Error('must be 3-32 characters of A-Z a-z 0-9 . _ -');
    return raw;
  }),
  ADMIN_PASSWORD: optional((raw) => {
    if (raw.length < 8 || raw.length > 128) throw new Error('must be 8-128 characters long');
    return raw;
  }),
  REDIRECT_STATUS: {
    default: 302 as RedirectStatus,
    parse: (raw: string): RedirectStatus => {
      const n = Number(raw);
      if (n !== 301 && n !== 302 && n !== 307 && n !== 308) throw new Error('must be one of 301, 302, 307, 308');
      return n;
    },
  },
  RATE_LIMIT_PER_MINUTE: { default: 600, parse: int(1, 1_000_000) },
  TOKEN_RATE_LIMIT_PER_MINUTE: { default: 10, parse: int(1, 1_000_000) },
  REDIRECT_RATE_LIMIT_PER_MINUTE: { default: 6000, parse: int(1, 10_000_000) },
  TRUST_PROXY: {
    default: false as boolean | string | number,
    parse: (raw: string): boolean | string | number => {
      const v = raw.trim();
      if (/^(true|false)$/i.test(v)) return v.toLowerCase() === 'true';
      if (/^\d+$/.test(v)) return Number(v);
      if (/^[0-9a-fA-F:./, ]+$|^(loopback|linklocal|uniquelocal)(,.*)?$/.test(v)) return v;
      throw new Error('must be true, false, a hop count, or a comma-separated list of addresses/CIDRs');
    },
  },
  CORS_ORIGINS: {
    default: [] as string[],
    parse: (raw: string): string[] => {
      const list = raw.split(',').map((s) => s.trim()).filter(Boolean);
      for (const o of list) {
        if (o === '*') continue;
        let u: URL;
        try {
          u = new URL(o);
        } catch {
          throw new Error(`must be a comma-separated list of origins (scheme://host[:port]) or *; got ${o}`);
        }
        if (u.origin !== o) throw new Error(`must be a comma-separated list of origins (scheme://host[:port]) or *; got ${o}`);
      }
      return list;
    },
  },
  BODY_LIMIT_BYTES: { default: 65536, parse: int(1024, 100 * 1024 * 1024) },
  IDEMPOTENCY_TTL_SECONDS: { default: 86400, parse: int(1, 60 * 60 * 24 * 30) },
  IDEMPOTENCY_LOCK_TIMEOUT_MS: { default: 60_000, parse: int(1_000, 3_600_000) },
  CLICK_FLUSH_MS: { default: 1000, parse: int(10, 60_000) },
  CLICK_JOURNAL: { default: true, parse: bool },
  CLICK_BATCH_SIZE: { default: 1000, parse: int(1, 100_000) },
  // Unset: EMBEDDED_QUEUE_LIMIT on the embedded engine, QUEUE_LIMIT otherwise (below).
  CLICK_QUEUE_LIMIT: optional(int(100, 10_000_000)),
  LINK_CACHE_SIZE: { default: 100_000, parse: int(0, 10_000_000) },
  LINK_PASSWORD_ATTEMPTS_PER_MINUTE: { default: 5, parse: int(1, 1000) },
  MAINTENANCE_MODE: { default: false, parse: bool },
  LOG_LEVEL: {
    default: 'info' as LogLevel,
    parse: (raw: string): LogLevel => {
      const levels = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];
      if (!levels.includes(raw)) throw new Error(`must be one of ${levels.join(', ')}`);
      return raw as LogLevel;
    },
  },
  DB_POOL_MAX: { default: 10, parse: int(1, 1000) },
  PASSWORD_HASH_COST: { default: 15, parse: int(10, 20) },
  // Scale-out (docs/deployment.md).
  REDIS_KEY_PREFIX: {
    default: 'ferry:',
    parse: (raw: string) => {
      if (!/^[A-Za-z0-9:._-]{1,64}$/.test(raw)) throw new Error('must be 1-64 characters of A-Z a-z 0-9 : . _ -');
      return raw;
    },
  },
  CLICK_WORKER_IN_PROCESS: { default: true, parse: bool },
  CLICK_CLAIM_IDLE_MS: { default: 30_000, parse: int(500, 3_600_000) },
  CLICK_RETENTION_MONTHS: { default: 0, parse: int(0, 1200) },
  API_V1_DEPRECATED_AT: optional(instant),
  API_V1_SUNSET_AT: optional(instant),
  API_V1_DEPRECATION_LINK: optional(httpUrl),
  API_V2_DEPRECATED_AT: optional(instant),
  API_V2_SUNSET_AT: optional(instant),
  API_V2_DEPRECATION_LINK: optional(httpUrl),
  // Overload bounds (plugins/overload.ts); 0 disables one. Event-loop utilisation is off by default: a loop that
  // is busy but still answers fast (a benchmark) runs near 1.0, so delay and heap are the default signals.
  OVERLOAD_MAX_EVENT_LOOP_DELAY_MS: { default: 500, parse: int(0, 60_000) },
  OVERLOAD_MAX_ELU: { default: 0, parse: fraction },
  OVERLOAD_MAX_HEAP_BYTES: { default: Math.floor(getHeapStatistics().heap_size_limit * 0.9), parse: int(0, Number.MAX_SAFE_INTEGER) },
  OVERLOAD_SAMPLE_INTERVAL_MS: { default: 1000, parse: int(100, 60_000) },
  SHUTDOWN_TIMEOUT_MS: { default: 25_000, parse: int(100, 600_000) },
  HEADERS_TIMEOUT_MS: { default: 10_000, parse: int(500, 600_000) },
  REQUEST_TIMEOUT_MS: { default: 30_000, parse: int(500, 3_600_000) },
  WEB_DIR: optional(nonEmpty),
  COUNTRY_HEADER: optional((raw) => {
    if (!/^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,64}$/.test(raw.trim())) throw new Error('must be an HTTP header name such as CF-IPCountry');
    return raw.trim().toLowerCase();
  }),
  GEOIP_DATABASE: optional(nonEmpty),
  IP_ANONYMIZE: { default: false, parse: bool },
} satisfies Record<string, Spec<unknown>>;

type Specs = typeof specs;
type Values = { [K in keyof Specs]: Specs[K]['default'] };

/** Variables whose value is a secret: a problem with one names its length, never its text (SPEC §12). */
const SECRET_VARIABLES = new Set<string>(['JWT_SECRET', 'ADMIN_PASSWORD']);

/**
 * How a rejected value is shown in the start-up error: secrets by their length only, and the userinfo of
 * any URL-like value (DATABASE_URL, REDIS_URL, or a mistyped one that did not parse) masked, the password
 * always; other values quoted, cut at 60 characters.
 */
export function shownValue(name: string, raw: string): string {
  if (SECRET_VARIABLES.has(name)) return `(${raw.length} characters, not shown)`;
  // Everything between // and the last @ is userinfo: a password may hold an unescaped / or @.
  const start = raw.indexOf('//');
  const at = raw.lastIndexOf('@');
  let shown = raw.length > 60 ? `${raw.slice(0, 60)}…` : raw;
  if (start !== -1 && at > start) {
    const userinfo = raw.slice(start + 2, at);
    const colon = userinfo.indexOf(':');
    shown = `${raw.slice(0, start + 2)}${colon === -1 ? '***' : `${userinfo.slice(0, colon)}:***`}${raw.slice(at)}`;
  }
  return JSON.stringify(shown);
}

/**
 * Reads the environment. Every bad variable is reported, one per line, each naming the variable and what
 * is allowed; a ConfigError carries them all so server.ts can print them and exit 1.
 */
export function loadConfig(env: Env = {}): Config {
  const problems: string[] = [];
  const values = {} as Record<string, unknown>;
  for (const [name, spec] of Object.entries(specs) as [keyof Specs, Spec<unknown>][]) {
    const raw = env[name];
    if (raw === undefined) {
      values[name] = spec.default;
      continue;
    }
    try {
      values[name] = spec.parse(raw);
    } catch (err) {
      problems.push(`${name}=${shownValue(name, raw)}: ${(err as Error).message}`);
    }
  }
  const v = values as Values;
  if (problems.length === 0 && (v.ADMIN_USERNAME === null) !== (v.ADMIN_PASSWORD === null)) {
    problems.push('ADMIN_USERNAME and ADMIN_PASSWORD: set both or neither');
  }
  for (const n of [1, 2] as const) {
    const dep = v[`API_V${n}_DEPRECATED_AT`];
    const sunset = v[`API_V${n}_SUNSET_AT`];
    // RFC 9745 §4: Sunset must not be earlier than Deprecation.
    if (dep !== null && sunset !== null && sunset < dep) problems.push(`API_V${n}_SUNSET_AT: must not be earlier than API_V${n}_DEPRECATED_AT`);
  }
  if (problems.length === 0 && v.HEADERS_TIMEOUT_MS > v.REQUEST_TIMEOUT_MS) {
    problems.push('HEADERS_TIMEOUT_MS must not be greater than REQUEST_TIMEOUT_MS');
  }
  // One line per bad variable, each readable on its own.
  if (problems.length > 0) throw new ConfigError(problems.map((p) => `Invalid configuration: ${p}`).join('\n'));

  const displayHost = v.HOST.includes(':') ? `[${v.HOST}]` : v.HOST === '0.0.0.0' ? '127.0.0.1' : v.HOST;
  return Object.freeze({
    port: v.PORT,
    host: v.HOST,
    dataDir: v.DATA_DIR,
    publicBaseUrl: v.PUBLIC_BASE_URL ?? `http://${displayHost}:${v.PORT}`,
    databaseUrl: v.DATABASE_URL,
    redisUrl: v.REDIS_URL,
    jwtSecret: v.JWT_SECRET,
    tokenTtlSeconds: v.TOKEN_TTL_SECONDS,
    adminUsername: v.ADMIN_USERNAME,
    adminPassword: v.ADMIN_PASSWORD,
    redirectStatus: v.REDIRECT_STATUS,
    rateLimitPerMinute: v.RATE_LIMIT_PER_MINUTE,
    tokenRateLimitPerMinute: v.TOKEN_RATE_LIMIT_PER_MINUTE,
    redirectRateLimitPerMinute: v.REDIRECT_RATE_LIMIT_PER_MINUTE,
    trustProxy: v.TRUST_PROXY,
    corsOrigins: v.CORS_ORIGINS,
    bodyLimitBytes: v.BODY_LIMIT_BYTES,
    idempotencyTtlSeconds: v.IDEMPOTENCY_TTL_SECONDS,
    idempotencyLockTimeoutMs: v.IDEMPOTENCY_LOCK_TIMEOUT_MS,
    clickFlushMs: v.CLICK_FLUSH_MS,
    clickJournal: v.CLICK_JOURNAL,
    clickBatchSize: v.CLICK_BATCH_SIZE,
    // The engine decides, as it decides the queue (click-pipeline.ts): SQLite with REDIS_URL still journals
    // its clicks and writes them in windows.
    clickQueueLimit: v.CLICK_QUEUE_LIMIT ?? (v.DATABASE_URL === null ? EMBEDDED_QUEUE_LIMIT : QUEUE_LIMIT),
    linkCacheSize: v.LINK_CACHE_SIZE,
    linkPasswordAttemptsPerMinute: v.LINK_PASSWORD_ATTEMPTS_PER_MINUTE,
    maintenanceMode: v.MAINTENANCE_MODE,
    logLevel: v.LOG_LEVEL,
    dbPoolMax: v.DB_POOL_MAX,
    passwordHashCost: v.PASSWORD_HASH_COST,
    redisKeyPrefix: v.REDIS_KEY_PREFIX,
    // SPEC §12: with REDIS_URL every API instance also consumes the click stream, so `npm start` alone never
    // leaves clicks uncounted; CLICK_WORKER_IN_PROCESS=false leaves the writing to `npm run worker`.
    clickWorkerInProcess: v.CLICK_WORKER_IN_PROCESS,
    clickClaimIdleMs: v.CLICK_CLAIM_IDLE_MS,
    clickRetentionMonths: v.CLICK_RETENTION_MONTHS,
    apiDeprecation: {
      1: { deprecatedAt: v.API_V1_DEPRECATED_AT, sunsetAt: v.API_V1_SUNSET_AT, link: v.API_V1_DEPRECATION_LINK },
      2: { deprecatedAt: v.API_V2_DEPRECATED_AT, sunsetAt: v.API_V2_SUNSET_AT, link: v.API_V2_DEPRECATION_LINK },
    },
    overloadMaxEventLoopDelayMs: v.OVERLOAD_MAX_EVENT_LOOP_DELAY_MS,
    overloadMaxElu: v.OVERLOAD_MAX_ELU,
    overloadMaxHeapBytes: v.OVERLOAD_MAX_HEAP_BYTES,
    overloadSampleIntervalMs: v.OVERLOAD_SAMPLE_INTERVAL_MS,
    shutdownTimeoutMs: v.SHUTDOWN_TIMEOUT_MS,
    headersTimeoutMs: v.HEADERS_TIMEOUT_MS,
    requestTimeoutMs: v.REQUEST_TIMEOUT_MS,
    webDir: v.WEB_DIR,
    countryHeader: v.COUNTRY_HEADER,
    geoipDatabase: v.GEOIP_DATABASE,
    ipAnonymize: v.IP_ANONYMIZE,
  });
}
