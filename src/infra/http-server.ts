import http, { type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { guardChunkedBody } from './chunked-body-guard.js';

/**
 * Answers a request and returns true, or returns false having done nothing (Fastify then handles it). Having
 * returned true, it may still hand the request, untouched, to Fastify later: `fallback(req, res)`.
 */
export type RawHandler = (req: IncomingMessage, res: ServerResponse, fallback: (req: IncomingMessage, res: ServerResponse) => void) => boolean;

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
  /** connections accepted so far (the drain closes the listener once none has come for a while) */
  accepted: number;
}
const drains = new WeakMap<Server, DrainState>();

/** The drain closes the listener once no connection has arrived for this long. */
const DRAIN_QUIET_MS = 50;

/**
 * Fastify's `serverFactory`: the HTTP/1 server Fastify would create itself (same options and timeouts, see
 * fastify/lib/server.js), with two differences: a request is first offered to `first()` (the redirect's
 * fast path, once the app has set it up), and goes to Fastify only if that declines it; and it can drain
 * without cutting a request (drainConnections).
 */
export function serverWithFastPath(first: () => RawHandler | null) {
  return (fastify: (req: IncomingMessage, res: ServerResponse) => void, options: ServerOptions): Server => {
    const state: DrainState = { draining: false, sockets: new Set(), accepted: 0 };
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
      state.accepted += 1;
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
 * A graceful shutdown's first step (SPEC §12), resolved once every connection has ended. From the call on,
 * every response says `Connection: close` — those in flight whose headers are not yet sent, and every
 * request that still arrives — so each connection ends after its current answer, or at its keep-alive
 * timeout if no request comes, never under a request. Then `app.close()` runs the close hooks with no request
 * left.
 *
 * The listener is not closed at once: closing a listening socket resets the connections that the kernel has
 * already completed but the event loop has not yet accepted, and a loaded loop (which is when SIGTERM
 * matters) leaves many of those. It closes, after this turn's I/O, once DRAIN_QUIET_MS pass without a new
 * connection, or after `acceptForMs` in any case (a "lame duck" period: readiness already fails, so a
 * balancer stops sending while connections it still sends are served); connections accepted until then are
 * answered with Connection: close, later ones are refused. Only a client still opening connections when
 * `acceptForMs` ends can meet a reset. Resolves at once for a server not made here or not listening.
 */
export function drainConnections(server: Server, acceptForMs: number): Promise<void> {
  const state = drains.get(server);
  if (!state || state.draining || !server.listening) return Promise.resolve();
  state.draining = true;
  for (const socket of state.sockets) {
    const res = socket[CURRENT];
    if (res !== undefined && !res.headersSent && !res.writableEnded) res.setHeader('connection', 'close');
  }
  const started = Date.now();
  return new Promise((resolve) => {
    let seen = state.accepted;
    // Checked in the check phase (setImmediate), right after a poll phase has accepted what had arrived.
    const check = () => {
      if (state.accepted === seen || Date.now() - started >= acceptForMs) {
        server.close(() => resolve());
        return;
      }
      seen = state.accepted;
      setTimeout(() => setImmediate(check), DRAIN_QUIET_MS);
    };
    setTimeout(() => setImmediate(check), DRAIN_QUIET_MS);
  });
}
