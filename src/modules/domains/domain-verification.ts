import { Resolver } from 'node:dns/promises';
import type { FastifyBaseLogger } from 'fastify';
import { createOutboundHttp, OutboundError, type OutboundHttp } from '../../infra/outbound-http.js';

/** The TXT record's value that proves control of a domain. */
export const txtValueOf = (token: string): string => `ferry-verification=${token}`;
export const txtNameOf = (hostname: string): string => `_ferry.${hostname}`;
export const HTTP_PATH_PREFIX = '/.well-known/ferry-verification/';
export const httpPathOf = (token: string): string => `${HTTP_PATH_PREFIX}${token}`;

/** At most this much of the HTTP answer is read (SPEC §19). */
const MAX_BODY_BYTES = 1024;
/** One check of a domain, TXT and HTTP together, ends within this (SPEC §25). */
const CHECK_DEADLINE_MS = 10_000;
const DNS_TIMEOUT_MS = 3_000;

/**
 * What a check of a domain found: proven, or what each proof saw — in words for the domain's owner ("no TXT
 * record", "answered without the token", "address not allowed", "no answer", a status code), never an
 * address, a port or a system error (SPEC §25).
 */
export type Proof = { found: true } | { found: false; dns: string; http: string };

export interface DomainChecker {
  /** The TXT record first; the HTTP path only when the record does not prove control (either proof will do). */
  prove(hostname: string, token: string): Promise<Proof>;
}

export interface DomainCheckerOptions {
  /** DNS_SERVERS: `host[:port]` entries; empty: the system's resolvers */
  dnsServers: readonly string[];
  /** DOMAIN_VERIFY_ALLOW_PRIVATE: the HTTP proof may reach loopback and private addresses (tests, private networks) */
  allowPrivate: boolean;
  /** the port of the HTTP check: 80 in production (tests pass the port of their own server) */
  httpPort?: number;
  /** the whole check's deadline (default 10 s; tests shorten it) */
  deadlineMs?: number;
  /** the outbound requests (default: one of its own, on DNS_SERVERS) */
  outbound?: OutboundHttp;
  /** where what the owner is not told goes (the address tried, the system's error) */
  log?: Pick<FastifyBaseLogger, 'info'>;
}

const NO_RECORD = new Set(['ENODATA', 'ENOTFOUND']);

async function checkTxtRecord(
  opts: DomainCheckerOptions,
  hostname: string,
  token: string,
  signal: AbortSignal,
): Promise<string | null> {
  const name = txtNameOf(hostname);
  const resolver = new Resolver({ timeout: DNS_TIMEOUT_MS, tries: 2 });
  if (opts.dnsServers.length) resolver.setServers([...opts.dnsServers]);
  const cancel = () => resolver.cancel();
  signal.addEventListener('abort', cancel, { once: true });
  try {
    const records = (await resolver.resolveTxt(name)).map((chunks) => chunks.join(''));
    return records.includes(txtValueOf(token)) ? null : `TXT ${name}: answered without the token`;
  } catch (err) {
    const code = (err as { code?: string }).code ?? '';
    if (NO_RECORD.has(code)) return `TXT ${name}: no TXT record`;
    opts.log?.info({ hostname, code }, 'domain verification: the TXT lookup failed');
    return `TXT ${name}: no answer`;
  } finally {
    signal.removeEventListener('abort', cancel);
  }
}

/** What the owner is told of a failed request. */
const ownerText = (err: OutboundError): string =>
  err.failure === 'address-not-allowed'
    ? 'address not allowed'
    : err.failure === 'no-address'
      ? 'no address'
      : 'no answer';

type CheckerParts = DomainCheckerOptions & { outbound: OutboundHttp };

async function checkHttpPath(
  opts: CheckerParts,
  hostname: string,
  token: string,
  deadlineMs: number,
): Promise<string | null> {
  const path = httpPathOf(token);
  const shown = `http://${hostname}${path}`;
  const port = opts.httpPort ?? 80;
  try {
    const res = await opts.outbound.request({
      url: `http://${hostname}${port === 80 ? '' : `:${port}`}${path}`,
      headers: { accept: 'text/plain' },
      deadlineMs,
      maxBodyBytes: MAX_BODY_BYTES,
      onTooLarge: 'truncate',
      allowPrivate: opts.allowPrivate,
    });
    if (res.status >= 300 && res.status < 400) return `${shown}: answered ${res.status} (redirects are not followed)`;
    if (res.status !== 200) return `${shown}: answered ${res.status}`;
    return res.body.toString('utf8').trim() === token ? null : `${shown}: answered without the token`;
  } catch (err) {
    if (!(err instanceof OutboundError)) throw err;
    opts.log?.info(
      { hostname, failure: err.failure, detail: err.detail },
      'domain verification: the HTTP proof failed',
    );
    return `${shown}: ${ownerText(err)}`;
  }
}

/**
 * The two proofs of control of a domain (SPEC §19, §25), through the system's resolvers or DNS_SERVERS. The
 * HTTP check goes through the outbound module: the name's every address is checked (loopback and private
 * ones refused unless DOMAIN_VERIFY_ALLOW_PRIVATE), the connection goes to the address checked, no redirect
 * is followed and at most 1 KB is read; TXT and HTTP together end within 10 s.
 */
export function createDomainChecker(options: DomainCheckerOptions): DomainChecker {
  const opts = { ...options, outbound: options.outbound ?? createOutboundHttp({ dnsServers: options.dnsServers }) };
  const deadlineMs = opts.deadlineMs ?? CHECK_DEADLINE_MS;
  return {
    async prove(hostname, token) {
      const started = Date.now();
      const signal = AbortSignal.timeout(deadlineMs);
      const dns = await checkTxtRecord(opts, hostname, token, signal);
      if (dns === null) return { found: true };
      const left = Math.max(1, deadlineMs - (Date.now() - started));
      const http = await checkHttpPath(opts, hostname, token, left);
      return http === null ? { found: true } : { found: false, dns, http };
    },
  };
}
