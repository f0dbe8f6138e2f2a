import { promises as dns } from 'node:dns';
import http from 'node:http';

/** The TXT record's value that proves control of a domain. */
export const txtValueOf = (token: string): string => `ferry-verification=${token}`;
export const txtNameOf = (hostname: string): string => `_ferry.${hostname}`;
export const HTTP_PATH_PREFIX = '/.well-known/ferry-verification/';
export const httpPathOf = (token: string): string => `${HTTP_PATH_PREFIX}${token}`;

/** At most this much of the HTTP answer is read (SPEC §19). */
const MAX_BODY_BYTES = 1024;
const HTTP_TIMEOUT_MS = 5_000;
const DNS_TIMEOUT_MS = 3_000;

export interface CheckOutcome {
  ok: boolean;
  /** what was found, for the 422 and the record (never more than a short line) */
  found: string;
}

export interface DomainChecker {
  txt(hostname: string, token: string): Promise<CheckOutcome>;
  http(hostname: string, token: string): Promise<CheckOutcome>;
}

export interface DomainCheckerOptions {
  /** DNS_SERVERS: `host[:port]` entries; empty: the system's resolvers */
  dnsServers: readonly string[];
  /** the port of the HTTP check: 80 in production (tests pass the port of their own server) */
  httpPort?: number;
}

const dnsFailure = (err: unknown): string => {
  const code = (err as { code?: string }).code ?? 'error';
  return code === 'ENODATA' || code === 'ENOTFOUND' ? 'no such record' : `the lookup failed (${code})`;
};

const shown = (text: string): string => JSON.stringify(text.length > 80 ? `${text.slice(0, 80)}…` : text);

/** The name's first IPv4 address, else its first IPv6 one. */
async function addressOf(resolver: dns.Resolver, hostname: string): Promise<string> {
  try {
    const v4 = await resolver.resolve4(hostname);
    if (v4[0]) return v4[0];
  } catch (err) {
    const code = (err as { code?: string }).code;
    if (code !== 'ENODATA' && code !== 'ENOTFOUND') throw err;
  }
  const v6 = await resolver.resolve6(hostname);
  if (!v6[0]) throw Object.assign(new Error('no address'), { code: 'ENODATA' });
  return v6[0];
}

/** One GET to `ip` with `hostname` as Host; the body is cut at MAX_BODY_BYTES, and a cut body still answers. */
function getVerificationPath(ip: string, port: number, hostname: string, path: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: ip, port, path, method: 'GET', agent: false, timeout: HTTP_TIMEOUT_MS, headers: { host: hostname, accept: 'text/plain' } }, (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (chunk: Buffer) => {
        chunks.push(chunk);
        size += chunk.length;
        if (size >= MAX_BODY_BYTES) res.destroy();
      });
      const done = () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).subarray(0, MAX_BODY_BYTES).toString('utf8') });
      res.on('end', done);
      res.on('close', done);
      res.on('error', done);
    });
    req.on('timeout', () => req.destroy(Object.assign(new Error('timed out'), { code: 'ETIMEDOUT' })));
    req.on('error', reject);
    req.end();
  });
}

async function checkTxtRecord(resolver: dns.Resolver, hostname: string, token: string): Promise<CheckOutcome> {
  const name = txtNameOf(hostname);
  const expected = txtValueOf(token);
  let records: string[];
  try {
    records = (await resolver.resolveTxt(name)).map((chunks) => chunks.join(''));
  } catch (err) {
    return { ok: false, found: `TXT ${name}: ${dnsFailure(err)}` };
  }
  if (records.includes(expected)) return { ok: true, found: `TXT ${name} has the value` };
  return { ok: false, found: `TXT ${name}: ${records.length ? records.slice(0, 3).map(shown).join(', ') : 'no value'}, not ${shown(expected)}` };
}

async function checkHttpPath(resolver: dns.Resolver, port: number, hostname: string, token: string): Promise<CheckOutcome> {
  const path = httpPathOf(token);
  const url = `http://${hostname}${path}`;
  let ip: string;
  try {
    ip = await addressOf(resolver, hostname);
  } catch (err) {
    return { ok: false, found: `${url}: the name has no address (${dnsFailure(err)})` };
  }
  try {
    const res = await getVerificationPath(ip, port, hostname, path);
    if (res.status >= 300 && res.status < 400) return { ok: false, found: `${url} answered ${res.status} (redirects are not followed)` };
    if (res.status !== 200) return { ok: false, found: `${url} answered ${res.status}` };
    if (res.body.trim() !== token) return { ok: false, found: `${url} answered 200 without the token` };
    return { ok: true, found: `${url} answered the token` };
  } catch (err) {
    return { ok: false, found: `${url}: ${(err as { code?: string }).code ?? 'the request failed'} at ${ip}:${port}` };
  }
}

/**
 * The two proofs of control of a domain (SPEC §19), through the system's resolvers or DNS_SERVERS. The HTTP
 * check connects to the address the name resolves to, on port 80, and sends the name as Host: reaching this
 * very service on loopback is the point, so no address is refused here (and nowhere else). It follows no
 * redirect and reads at most 1 KB.
 */
export function createDomainChecker(opts: DomainCheckerOptions): DomainChecker {
  const resolver = new dns.Resolver({ timeout: DNS_TIMEOUT_MS, tries: 2 });
  if (opts.dnsServers.length) resolver.setServers([...opts.dnsServers]);
  const httpPort = opts.httpPort ?? 80;
  return {
    txt: (hostname, token) => checkTxtRecord(resolver, hostname, token),
    http: (hostname, token) => checkHttpPath(resolver, httpPort, hostname, token),
  };
}
