import http, { type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { guardChunkedBody } from './chunked-body-guard.js';
import { closeOnceAccepted } from './listener-queue.js';

/**
 * Answers a request and returns true, or returns false having done nothing (Fastify then handles it). Having
 * returned true, it may still hand the request, untouched, to Fastify later: `fallback(req, res)`.
 */
export type RawHandler = (
  req: IncomingMessage,
  res: ServerResponse,
  fallback: (req: IncomingMessage, res: ServerResponse) => void,
) => boolean;

interface ServerOptions {
  http?: http.ServerOptions;
  /** Fastify's bodyLimit: a chunk declared larger is refused at once (chunked-body-guard.ts) */
  bodyLimit?: number;
  keepAliveTimeout?: number;
  requestTimeout?: number;
  connectionTimeout?: number;
  maxRequestsPerSocket?: number;
}

/** The response a connection is working on (set per request: one property write, no listener). */
const CURRENT = Symbol('ferry.currentResponse');
type TrackedSocket = Socket & { [CURRENT]?: ServerResponse };

interface DrainState {
  draining: boolean;
  sockets: Set<TrackedSocket>;
}
const drains = new WeakMap<Server, DrainState>();

/**
 * Fastify's `serverFactory`: the HTTP/1 server Fastify would create itself (same options and timeouts, see
 * fastify/lib/server.js), with two differences: a request is first offered to `first()` (the redirect's
 * fast path, once the app has set it up), and goes to Fastify only if that declines it; and it can drain
 * without cutting a request (drainConnections).
 */
export function serverWithFastPath(first: () => RawHandler | null) {
  return (fastify: (req: IncomingMessage, res: ServerResponse) => void, options: ServerOptions): Server => {
    const state: DrainState = { draining: false, sockets: new Set() };
    // Node's own Host check answers a bare 400; plugins/request-target.ts answers it with the envelope.
    const server = http.createServer({ ...options.http, requireHostHeader: false }, (req, res) => {
      // A client that sent a request and reset at once: its socket has no address any more. Nobody is there
      // to answer, and request.ip would be undefined in every hook (SPEC §12: a reset causes no error).
      // Reading the address here also keeps it for the request's lifetime (Node caches the peer name).
      if (req.socket.remoteAddress === undefined) {
        req.socket.destroy();
        return;
      }
      if (options.bodyLimit !== undefined && guardChunkedBody(req, res, options.bodyLimit, Date.now)) return;
      if (state.draining) res.setHeader('connection', 'close');
      else (req.socket as TrackedSocket)[CURRENT] = res;
      const fast = first();
      if (fast === null || !fast(req, res, fastify)) fastify(req, res);
    });
    server.on('connection', (socket: TrackedSocket) => {
      state.sockets.add(socket);
      socket.once('close', () => state.sockets.delete(socket));
    });
    drains.set(server, state);
    // Node's close() (and Fastify's) destroys idle keep-alive sockets at once; a client may be writing its
    // next request on one at that very moment, and that request is then reset. While draining, an idle socket
    // is left to its keep-alive timeout instead (the bound clients are told in `Keep-Alive: timeout=…` and
    // keep a margin under), and a request that still arrives on it is answered with Connection: close.
    const closeIdle = server.closeIdleConnections.bind(server);
    server.closeIdleConnections = () => {
      if (!state.draining) closeIdle();
    };
    if (options.keepAliveTimeout !== undefined) server.keepAliveTimeout = options.keepAliveTimeout;
    if (options.requestTimeout !== undefined) server.requestTimeout = options.requestTimeout;
    if (options.connectionTimeout !== undefined) server.setTimeout(options.connectionTimeout);
    if (options.maxRequestsPerSocket) server.maxRequestsPerSocket = options.maxRequestsPerSocket;
    return server;
  };
}

/** Has drainConnections begun on this server (readiness reports not ready from then on)? */
export const isDraining = (server: Server): boolean => drains.get(server)?.draining === true;

/**
 * A graceful shutdown's first step (SPEC §12, §17), resolved once every connection has ended. From the call
 * on, every response says `Connection: close` — those in flight whose headers are not yet sent, and every
 * request that still arrives on an open connection — so each connection ends after its current answer, or at
 * its keep-alive timeout if no request comes, never under a request (closeIdleConnections waits while
 * draining). Then `app.close()` runs the close hooks with no request left. Resolves at once for a server not
 * made here or not listening.
 *
 * New connections are refused from the signal on, and none the kernel had already completed is reset: closing
 * a listening socket resets the connections in its accept queue (completed, not yet accepted by the loop; a
 * loaded loop holds dozens for seconds, their requests already sent), so the listener first stops taking new
 * ones (stopNewConnections) and closes once the loop has accepted what was queued (listener-queue.ts).
 * (A listener kept open while connections kept coming let the clients' reconnections in after their
 * `Connection: close` answers, and reset those still queued when it closed at last: 18–20 of 20 clients.)
 */
export function drainConnections(server: Server, maxWaitMs: number): Promise<void> {
  const state = drains.get(server);
  if (!state || state.draining || !server.listening) return Promise.resolve();
  state.draining = true;
  for (const socket of state.sockets) {
    const res = socket[CURRENT];
    if (res !== undefined && !res.headersSent && !res.writableEnded) res.setHeader('connection', 'close');
  }
  return new Promise((resolve) => closeOnceAccepted(server, maxWaitMs, () => server.close(() => resolve())));
}
