import type { IncomingHttpHeaders } from 'node:http';

/** One request of an exchange: where it goes (the checked address), and what it sends. */
export interface Hop {
  url: URL;
  address: string;
  method: string;
  headers: Record<string, string>;
  body: string | Uint8Array | undefined;
  /** a status answered without reading the body (a redirect about to be followed) */
  skipBody: (status: number, headers: IncomingHttpHeaders) => boolean;
}

/** Credentials that stay with the origin they were meant for (as browsers and fetch do). */
const ORIGIN_BOUND = new Set(['authorization', 'cookie', 'proxy-authorization']);

/** What the next hop sends: a 303, and a 301/302 after a POST, go on as a GET without body. */
export function nextHop(hop: Hop, status: number, next: URL): Pick<Hop, 'method' | 'headers' | 'body'> {
  const asGet = status === 303 || ((status === 301 || status === 302) && hop.method === 'POST');
  const headers = Object.fromEntries(
    Object.entries(hop.headers).filter(([k]) => {
      const key = k.toLowerCase();
      if (key === 'host' || (asGet && key === 'content-length')) return false;
      return next.origin === hop.url.origin || !ORIGIN_BOUND.has(key);
    }),
  );
  if (!asGet) return { method: hop.method, headers, body: hop.body };
  return { method: hop.method === 'HEAD' ? 'HEAD' : 'GET', headers, body: undefined };
}

/** Headers Ferry sets itself: the URL's Host, the body's length, and whether the connection stays open. */
const OWN_HEADERS = new Set(['host', 'content-length', 'connection']);

export function requestHeaders(
  url: URL,
  headers: Readonly<Record<string, string>>,
  body: Hop['body'],
  keepAlive: boolean,
): Record<string, string> {
  const own = Object.fromEntries(Object.entries(headers).filter(([k]) => !OWN_HEADERS.has(k.toLowerCase())));
  const size = body === undefined ? null : typeof body === 'string' ? Buffer.byteLength(body) : body.length;
  const length: Record<string, string> = size === null ? {} : { 'content-length': String(size) };
  return { ...own, ...length, host: url.host, connection: keepAlive ? 'keep-alive' : 'close' };
}
