import http, { type IncomingHttpHeaders, type IncomingMessage } from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import { checkedAddress, createHostResolver, literalAddress, type ResolveHost } from './outbound-address.js';
import { connectionFailure, describeError, OutboundError, StaleConnection } from './outbound-error.js';
import { nextHop, requestHeaders, type Hop } from './outbound-hops.js';

export { OutboundError, type OutboundFailure } from './outbound-error.js';
export type { ResolveHost } from './outbound-address.js';

/**
 * One request Ferry makes on its own (STYLE rule 16, SPEC §25): domain verification now; webhooks (§22), link
 * checks (§24) and importers next.
 */
export interface OutboundRequest {
  /** an absolute http or https URL; its host is resolved and checked (an IP literal is checked the same way) */
  url: string;
  /** default GET */
  method?: 'GET' | 'HEAD' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** sent as given; Host is always the URL's, Content-Length the body's */
  headers?: Readonly<Record<string, string>>;
  body?: string | Uint8Array;
  /**
   * Redirects followed, each hop's host resolved and checked like the first (default 0: a 3xx is the answer).
   * Past the number: OutboundError 'too-many-redirects'. 303 (and 301/302 after a POST) continue as a GET
   * without body; Authorization and Cookie are not carried to another origin.
   */
  maxRedirects?: number;
  /** one deadline for everything: DNS, connect, TLS, headers, body and every redirect */
  deadlineMs: number;
  /** at most this many bytes of the body are read */
  maxBodyBytes: number;
  /** past maxBodyBytes: 'fail' (OutboundError 'too-large', the default) or 'truncate' (the first maxBodyBytes) */
  onTooLarge?: 'fail' | 'truncate';
  /** connect to loopback, private, link-local, CGNAT, multicast, unspecified and reserved addresses too */
  allowPrivate?: boolean;
  /** the caller's own stop (shutdown): OutboundError 'cancelled' */
  signal?: AbortSignal;
}

export interface OutboundResponse {
  status: number;
  headers: IncomingHttpHeaders;
  /** empty for a redirect that was followed through */
  body: Buffer;
  /** the body went on past maxBodyBytes (onTooLarge 'truncate') */
  truncated: boolean;
  /** the URL that gave this answer (the last hop) */
  url: string;
}

export interface OutboundHttp {
  /** Rejects with OutboundError only; its message may be shown to a user, its `detail` only logged. */
  request(req: OutboundRequest): Promise<OutboundResponse>;
  /** Closes the connections kept open (keepAlive); requests still under way end as they would. */
  close?(): void;
}

export interface OutboundHttpOptions {
  /** DNS_SERVERS (`host[:port]`); empty or absent: the system's resolvers */
  dnsServers?: readonly string[];
  /** another resolver (tests) */
  resolve?: ResolveHost;
  /**
   * Keep a connection open after an answer read to its end, for the next request to the same checked address
   * (webhooks: thousands of deliveries to one receiver, each a TCP, and on https a TLS, handshake otherwise).
   * Connections are pooled by the address connected to (and the TLS name), never by host name: a request takes
   * one only after its own lookup was checked and gave that address. Default: one request per connection.
   */
  keepAlive?: boolean;
}

/** How long a kept connection may sit unused (below the 5 s that Node's servers, and so Ferry's, keep one). */
const KEEP_IDLE_MS = 4_000;

const REDIRECTS = new Set([301, 302, 303, 307, 308]);
/** Never called: the request connects to an IP literal. If Node ever asked, no second lookup may answer. */
const noSecondLookup: LookupFunction = (hostname, _options, callback) => {
  const err = Object.assign(new Error(`no lookup of ${hostname}: the address was resolved and checked before`), {
    code: 'ENOTFOUND',
  });
  callback(err, '', 4);
};

function parseTarget(raw: string, base?: URL): URL {
  let url: URL;
  try {
    url = new URL(raw, base);
  } catch {
    throw new OutboundError('bad-url', `not a URL: ${raw.slice(0, 200)}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new OutboundError('bad-url', `scheme ${url.protocol}`);
  if (url.username || url.password) throw new OutboundError('bad-url', 'credentials in the URL');
  return url;
}

/** The reason the signal stopped a request: the caller's stop, or the deadline. */
const stopped = (signal: AbortSignal, caller: AbortSignal | undefined, where: string): OutboundError =>
  caller?.aborted
    ? new OutboundError('cancelled', `${where}: cancelled`)
    : new OutboundError('timeout', `${where}: the deadline passed`);

/** `work`, or the signal's stop if that comes first (a lookup that cannot be cancelled is left behind). */
function beforeStop<T>(work: Promise<T>, signal: AbortSignal, onStop: () => OutboundError): Promise<T> {
  if (signal.aborted) return Promise.reject(onStop());
  return new Promise<T>((resolve, reject) => {
    const stop = () => reject(onStop());
    signal.addEventListener('abort', stop, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', stop));
  });
}

/** Reads the body up to the limit; `finish` settles the exchange (once); `whole`: the answer was read to its end. */
type Finish = (r: OutboundResponse | OutboundError, whole?: boolean) => void;

function readBody(res: IncomingMessage, hop: Hop, req: OutboundRequest, finish: Finish): void {
  const base = { status: res.statusCode ?? 0, headers: res.headers, url: hop.url.href };
  if (hop.skipBody(base.status, res.headers)) return finish({ ...base, body: Buffer.alloc(0), truncated: false });
  const chunks: Buffer[] = [];
  let size = 0;
  res.on('data', (chunk: Buffer) => {
    if (size + chunk.length > req.maxBodyBytes) {
      if (req.onTooLarge !== 'truncate') {
        return finish(new OutboundError('too-large', `${hop.url.host}: more than ${req.maxBodyBytes} bytes`));
      }
      chunks.push(chunk.subarray(0, req.maxBodyBytes - size));
      return finish({ ...base, body: Buffer.concat(chunks), truncated: true });
    }
    chunks.push(chunk);
    size += chunk.length;
  });
  res.on('end', () => finish({ ...base, body: Buffer.concat(chunks), truncated: false }, true));
  const cutOff = (why: string) =>
    finish(new OutboundError('unreachable', `${hop.address}: the answer was cut off${why}`));
  res.on('error', (err) => cutOff(` (${describeError(err)})`));
  res.on('aborted', () => cutOff(''));
}

/** http's and https's pools of kept connections, or none (`agent: false`: a connection per request). */
type Agents = { http: http.Agent; https: https.Agent } | null;

/**
 * One request to the checked address; the signal (deadline or caller) ends it wherever it is. With `agents`, a
 * connection whose answer was read to its end goes back to the pool; any other end destroys it.
 */
function exchange(hop: Hop, req: OutboundRequest, signal: AbortSignal, agents: Agents): Promise<OutboundResponse> {
  return new Promise((resolve, reject) => {
    const where = `${hop.address} (${hop.url.host})`;
    let response: IncomingMessage | undefined;
    let done = false;
    const finish = (r: OutboundResponse | OutboundError, whole = false) => {
      if (done) return;
      done = true;
      signal.removeEventListener('abort', onStop);
      if (!agents || !whole) {
        request.destroy();
        response?.destroy();
      }
      if (r instanceof OutboundError) reject(r);
      else resolve(r);
    };
    const onStop = () => finish(stopped(signal, req.signal, where));
    if (signal.aborted) return reject(stopped(signal, req.signal, where));
    const secure = hop.url.protocol === 'https:';
    let request: http.ClientRequest;
    try {
      request = (secure ? https : http).request(
        {
          host: hop.address,
          port: hop.url.port || (secure ? 443 : 80),
          path: `${hop.url.pathname}${hop.url.search}`,
          method: hop.method,
          agent: agents ? agents[secure ? 'https' : 'http'] : false,
          lookup: noSecondLookup,
          headers: hop.headers,
          // TLS: the name the certificate must match, and SNI (never an IP literal there).
          ...(secure && literalAddress(hop.url.hostname) === null ? { servername: hop.url.hostname } : {}),
        },
        (res) => {
          response = res;
          readBody(res, hop, req, finish);
        },
      );
    } catch (err) {
      // a header value Node refuses: the caller's mistake, nothing was sent
      return reject(new OutboundError('bad-url', `${where}: ${describeError(err)}`));
    }
    request.on('error', (err: NodeJS.ErrnoException) => {
      // A kept connection the peer closed while it sat unused: nothing was answered; a new one is tried once.
      if (request.reusedSocket && !response && err.code === 'ECONNRESET') return finish(new StaleConnection());
      finish(new OutboundError(connectionFailure(err), `${where}: ${describeError(err)}`));
    });
    signal.addEventListener('abort', onStop, { once: true });
    request.end(hop.body);
  });
}

/** How requests go out: the pools of kept connections (none: a connection per request), each hop's checked address. */
interface Route {
  agents: Agents;
  addressOf(url: URL, req: OutboundRequest, signal: AbortSignal): Promise<string>;
}

/** The request and the redirects it may follow, each hop to its checked address, until `signal` stops it. */
async function requestWithin(req: OutboundRequest, signal: AbortSignal, route: Route): Promise<OutboundResponse> {
  const { agents, addressOf } = route;
  const keepAlive = agents !== null;
  const maxRedirects = req.maxRedirects ?? 0;
  const follows = (status: number, headers: IncomingHttpHeaders) =>
    maxRedirects > 0 && REDIRECTS.has(status) && typeof headers.location === 'string';
  let url = parseTarget(req.url);
  let sent: Pick<Hop, 'method' | 'headers' | 'body'> = {
    method: req.method ?? 'GET',
    headers: requestHeaders(url, req.headers ?? {}, req.body, keepAlive),
    body: req.body,
  };
  for (let hops = 0; ; hops += 1) {
    const hop: Hop = { url, address: await addressOf(url, req, signal), ...sent, skipBody: follows };
    const res = await exchange(hop, req, signal, agents).catch((err: unknown) => {
      if (err instanceof StaleConnection) return exchange(hop, req, signal, null);
      throw err;
    });
    if (!follows(res.status, res.headers)) return res;
    if (hops >= maxRedirects) {
      throw new OutboundError('too-many-redirects', `more than ${maxRedirects} redirects, last at ${url.host}`);
    }
    const next = parseTarget(res.headers.location!, url);
    const carried = nextHop(hop, res.status, next);
    sent = { ...carried, headers: requestHeaders(next, carried.headers, carried.body, keepAlive) };
    url = next;
  }
}

/**
 * The one way Ferry makes a request of its own (STYLE rule 16): the host is resolved (DNS_SERVERS or the
 * system's resolvers), every address it has is checked (private ranges refused unless allowed), and the
 * connection goes to exactly the address that was checked — an IP literal, so no second lookup that DNS
 * rebinding could answer differently. One deadline covers the whole exchange, so a peer trickling a byte at a
 * time cannot hold it; at most maxBodyBytes are read.
 */
export function createOutboundHttp(opts: OutboundHttpOptions = {}): OutboundHttp {
  const resolve = opts.resolve ?? createHostResolver({ dnsServers: opts.dnsServers ?? [] });
  const keepAlive = opts.keepAlive === true;
  const pool = { keepAlive: true, timeout: KEEP_IDLE_MS, scheduling: 'lifo' as const };
  const agents: Agents = keepAlive ? { http: new http.Agent(pool), https: new https.Agent(pool) } : null;
  const addressOf = async (url: URL, req: OutboundRequest, signal: AbortSignal): Promise<string> => {
    const literal = literalAddress(url.hostname);
    const addresses =
      literal !== null
        ? [literal]
        : await beforeStop(resolve(url.hostname, signal), signal, () => stopped(signal, req.signal, url.hostname));
    return checkedAddress(url.hostname, addresses, req.allowPrivate === true);
  };

  const route: Route = { agents, addressOf };
  return {
    async request(req) {
      // One timer for the whole exchange, cleared when it ends (AbortSignal.timeout's would keep its signal, and
      // AbortSignal.any's, for the whole deadline after every request).
      const stop = new AbortController();
      const deadline = setTimeout(() => stop.abort(), req.deadlineMs);
      const cancel = () => stop.abort();
      if (req.signal?.aborted) stop.abort();
      else req.signal?.addEventListener('abort', cancel, { once: true });
      try {
        return await requestWithin(req, stop.signal, route);
      } finally {
        clearTimeout(deadline);
        req.signal?.removeEventListener('abort', cancel);
      }
    },
    close() {
      agents?.http.destroy();
      agents?.https.destroy();
    },
  };
}
