/**
 * How an environment variable declared as a TypeBox schema is read, reported and documented. config.ts declares
 * every variable once; this file derives from that declaration the value read from a string, the one-line
 * reason a string is refused, how a refused value is shown, and the row of the configuration table in the docs.
 *
 * The schema describes the value Ferry uses (an integer, a boolean, one of some literals, a string…), with
 * `default`, bounds (`minimum`/`maximum`, `minLength`/`maxLength`, `pattern`) and `description`, plus four
 * options of Ferry's own: `secret` (a refused value is shown by its length only), `must` (the rule a refused
 * value breaks, after "must", where the bounds alone do not say it), `read` (a reader for a spelling the
 * schema's type does not imply, e.g. an ISO date read as epoch milliseconds) and `documentedDefault` (the
 * default as the docs state it, where the value depends on other variables or on the machine).
 */
import { isIP } from 'node:net';
import Type, { type TSchema } from 'typebox';

export interface VariableOptions {
  description: string;
  secret?: boolean;
  must?: string;
  read?: keyof typeof readers;
  documentedDefault?: string;
}

/** What a variable's schema may carry; TypeBox keeps unknown options, so these sit on the schema itself. */
interface VariableSchema extends VariableOptions {
  type?: string;
  anyOf?: VariableSchema[];
  enum?: (string | number)[];
  default?: unknown;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  minBytes?: number;
}

/**
 * A variable that may be unset (or set to the empty string): null then. `schema` is the value's, with its
 * rules (`must`, `read`, bounds); `options` the variable's (description, secret, documentedDefault).
 */
export function optional<T extends TSchema>(schema: T, options: VariableOptions) {
  return Type.Union([schema, Type.Null()], { ...options, default: null });
}

/** An integer variable with its default and bounds. */
export const int = (defaultValue: number, minimum: number, maximum: number, description: string) =>
  Type.Integer({ default: defaultValue, minimum, maximum, description });

/** A boolean variable with its default. */
export const flag = (defaultValue: boolean, description: string) =>
  Type.Boolean({ default: defaultValue, description });

/** Spellings a schema's type does not imply; each returns the value or throws the rule after "must". */
const readers = {
  /** an absolute http(s) URL, kept without its trailing slashes */
  httpUrl: (raw: string): string => {
    const rule = 'be an absolute http(s) URL';
    let u: URL;
    try {
      u = new URL(raw);
    } catch {
      throw new Error(rule);
    }
    if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error(rule);
    return raw.replace(/\/+$/, '');
  },
  /** SPEC §22's message bus: `nats://host:port` or `amqp://user:pass@host/vhost`, with a host */
  busUrl: (raw: string): string => {
    const rule = 'be a nats://host:port or amqp://user:pass@host/vhost URL';
    let u: URL;
    try {
      u = new URL(raw);
    } catch {
      throw new Error(rule);
    }
    if ((u.protocol !== 'nats:' && u.protocol !== 'amqp:') || u.hostname === '') throw new Error(rule);
    return raw;
  },
  /** an ISO 8601 date or date-time, as epoch milliseconds */
  instant: (raw: string): number => {
    const ms = Date.parse(raw);
    if (!/^\d{4}-\d\d-\d\d/.test(raw) || Number.isNaN(ms))
      throw new Error('be an ISO 8601 date or date-time, e.g. 2027-01-01T00:00:00Z');
    return ms;
  },
  /** an HTTP header name, lower case */
  headerName: (raw: string): string => {
    if (!/^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,64}$/.test(raw.trim()))
      throw new Error('be an HTTP header name such as CF-IPCountry');
    return raw.trim().toLowerCase();
  },
  /** Fastify's trustProxy: true/false, a hop count, or addresses/CIDRs (or loopback, linklocal, uniquelocal) */
  trustProxy: (raw: string): boolean | string | number => {
    const v = raw.trim();
    if (/^(true|false)$/i.test(v)) return v.toLowerCase() === 'true';
    if (/^\d+$/.test(v)) return Number(v);
    if (/^[0-9a-fA-F:./, ]+$|^(loopback|linklocal|uniquelocal)(,.*)?$/.test(v)) return v;
    throw new Error('be true, false, a hop count, or a comma-separated list of addresses/CIDRs');
  },
  /** a comma-separated list of origins (scheme://host[:port]) or * */
  origins: (raw: string): string[] => {
    const list = raw
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean);
    for (const o of list) {
      if (o === '*') continue;
      const rule = `be a comma-separated list of origins (scheme://host[:port]) or *; got ${o}`;
      let u: URL;
      try {
        u = new URL(o);
      } catch {
        throw new Error(rule);
      }
      if (u.origin !== o) throw new Error(rule);
    }
    return list;
  },
  /** a comma-separated list of non-empty names (OIDC_ADMIN_GROUPS), each trimmed */
  commaList: (raw: string): string[] => {
    const list = raw
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean);
    for (const name of list)
      if (name.length > 255 || /\p{Cc}/u.test(name))
        throw new Error(`be a comma-separated list of names of at most 255 characters; got ${name.slice(0, 60)}`);
    return list;
  },
  /** IP addresses with an optional port (`host[:port]`, IPv6 as `[addr]:port`), comma-separated; a resolver named by a host name would need a resolver first */
  dnsServers: (raw: string): string[] => {
    const list = raw
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean);
    for (const entry of list) {
      const m = /^(?:\[([0-9a-fA-F:.]+)\]|([0-9.]+))(?::(\d{1,5}))?$/.exec(entry) ?? /^([0-9a-fA-F:]+)$/.exec(entry);
      const address = m?.[1] ?? m?.[2];
      const port = m?.[3] === undefined ? 53 : Number(m[3]);
      if (!address || isIP(address) === 0 || port < 1 || port > 65535)
        throw new Error(
          `be a comma-separated list of IP addresses with an optional port (127.0.0.1:5353, [::1]:53); got ${entry}`,
        );
    }
    return list;
  },
};

const TRUE = ['1', 'true', 'yes', 'on'];
const FALSE = ['0', 'false', 'no', 'off', ''];

function isNullable(s: VariableSchema): s is VariableSchema & { anyOf: [VariableSchema, VariableSchema] } {
  return s.anyOf?.length === 2 && s.anyOf[1]?.type === 'null';
}

/** The rule a value must follow, after "must" (the same sentence for the error and the docs). */
export function ruleOf(schema: TSchema): string {
  const s = schema as VariableSchema;
  if (s.must !== undefined) return s.must;
  if (isNullable(s)) return ruleOf(s.anyOf[0]);
  if (s.read !== undefined) return `be ${readerRules[s.read]}`;
  if (s.enum !== undefined) return `be one of ${s.enum.join(', ')}`;
  if (s.type === 'integer') return `be an integer between ${s.minimum} and ${s.maximum}`;
  if (s.type === 'number') return `be a number between ${s.minimum} and ${s.maximum}`;
  if (s.type === 'boolean') return 'be true or false';
  if (s.minBytes !== undefined) return `be at least ${s.minBytes} bytes long`;
  if (s.minLength !== undefined && s.maxLength !== undefined) return `be ${s.minLength}-${s.maxLength} characters long`;
  return 'not be empty';
}

/** The readers' rules as the docs state them (a refused value's message may add what was wrong). */
const readerRules: Record<keyof typeof readers, string> = {
  httpUrl: 'an absolute http(s) URL',
  busUrl: 'a nats://host:port or amqp://user:pass@host/vhost URL',
  instant: 'an ISO 8601 date or date-time, e.g. 2027-01-01T00:00:00Z',
  headerName: 'an HTTP header name such as CF-IPCountry',
  trustProxy: 'true, false, a hop count, or a comma-separated list of addresses/CIDRs',
  origins: 'a comma-separated list of origins (scheme://host[:port]) or *',
  commaList: 'a comma-separated list of names of at most 255 characters',
  dnsServers: 'a comma-separated list of IP addresses with an optional port (127.0.0.1:5353, [::1]:53)',
};

/** The value `raw` stands for under `schema`; throws an Error whose message is the rule broken ("must …"). */
export function readVariable(schema: TSchema, raw: string): unknown {
  const s = schema as VariableSchema;
  if (isNullable(s)) return raw === '' ? null : readVariable(s.anyOf[0], raw);
  const refuse = (): never => {
    throw new Error(`must ${ruleOf(s)}`);
  };
  if (s.read !== undefined) {
    try {
      return readers[s.read](raw);
    } catch (err) {
      throw new Error(`must ${(err as Error).message}`, { cause: err });
    }
  }
  if (s.enum !== undefined) {
    // numbers read as Number() reads them, strings exactly
    const value = typeof s.enum[0] === 'number' ? Number(raw) : raw;
    return s.enum.includes(value) ? value : refuse();
  }
  switch (s.type) {
    case 'integer': {
      if (!/^\d+$/.test(raw)) refuse();
      const n = Number(raw);
      return n < (s.minimum ?? 0) || n > (s.maximum ?? Number.MAX_SAFE_INTEGER) ? refuse() : n;
    }
    case 'number': {
      // a decimal number (no sign, no exponent) within the bounds: 0.98, 24, 0.5
      if (!/^\d+(\.\d+)?$/.test(raw.trim())) refuse();
      const n = Number(raw);
      return n < (s.minimum ?? 0) || n > (s.maximum ?? Number.MAX_SAFE_INTEGER) ? refuse() : n;
    }
    case 'boolean': {
      const v = raw.trim().toLowerCase();
      return TRUE.includes(v) ? true : FALSE.includes(v) ? false : refuse();
    }
    default:
      return stringBreaksRule(s, raw) ? refuse() : raw;
  }
}

/** Lengths count UTF-16 units, as JavaScript's `length` does; a string without other bounds must not be blank. */
function stringBreaksRule(s: VariableSchema, raw: string): boolean {
  const bounded =
    s.pattern !== undefined || s.minBytes !== undefined || s.minLength !== undefined || s.maxLength !== undefined;
  if (!bounded) return raw.trim() === '';
  if (s.pattern !== undefined && !new RegExp(s.pattern).test(raw)) return true;
  if (s.minBytes !== undefined && Buffer.byteLength(raw, 'utf8') < s.minBytes) return true;
  return (
    (s.minLength !== undefined && raw.length < s.minLength) || (s.maxLength !== undefined && raw.length > s.maxLength)
  );
}

/**
 * How a refused value is shown in the start-up error: a secret by its length only, and the userinfo of any
 * URL-like value (DATABASE_URL, REDIS_URL, or a mistyped one that did not parse) masked, the password always;
 * other values quoted, cut at 60 characters.
 */
export function shownValue(schema: TSchema, raw: string): string {
  if ((schema as VariableSchema).secret === true) return `(${raw.length} characters, not shown)`;
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

/** The configuration table of the docs: one row per variable, in declaration order. */
export function variablesTable(variables: Record<string, TSchema>): string {
  const cell = (text: string) => text.replace(/\|/g, '\\|');
  const rows = Object.entries(variables).map(([name, schema]) => {
    const s = schema as VariableSchema;
    const shown =
      s.documentedDefault ??
      (s.default === null ? 'unset' : `\`${Array.isArray(s.default) ? s.default.join(',') : String(s.default)}\``);
    const rule = ruleOf(s)
      .replace(/^be /, '')
      .replace(/^not be /, 'not ');
    const secret = s.secret === true ? `${s.description.endsWith('.') ? '' : '.'} Secret: never printed.` : '';
    return `| \`${name}\` | ${cell(shown === '``' ? 'empty' : shown)} | ${cell(rule)} | ${cell(s.description)}${secret} |`;
  });
  return ['| Variable | Default | Accepted | Meaning |', '|---|---|---|---|', ...rows].join('\n');
}
