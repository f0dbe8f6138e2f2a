import http, { type IncomingMessage, type Server, type ServerResponse } from 'node:http';

/** Answers a request and returns true, or returns false having done nothing (Fastify then handles it). */
export type RawHandler = (req: IncomingMessage, res: ServerResponse) => boolean;

interface ServerOptions {
  http?: http.ServerOptions;
  keepAliveTimeout?: number;
  requestTimeout?: number;
  connectionTimeout?: number;
  maxRequestsPerSocket?: number;
}

/**
 * Fastify's `serverFactory`: the HTTP/1 server Fastify would create itself (same options and timeouts, see
 * fastify/lib/server.js), with one difference: a request is first offered to `first()` (the redirect's
 * fast path, once the app has set it up), and goes to Fastify only if that declines it.
 */
export function serverWithFastPath(first: () => RawHandler | null) {
  return (fastify: (req: IncomingMessage, res: ServerResponse) => void, options: ServerOptions): Server => {
    const server = http.createServer(options.http ?? {}, (req, res) => {
      const fast = first();
      if (fast === null || !fast(req, res)) fastify(req, res);
    });
    if (options.keepAliveTimeout !== undefined) server.keepAliveTimeout = options.keepAliveTimeout;
    if (options.requestTimeout !== undefined) server.requestTimeout = options.requestTimeout;
    if (options.connectionTimeout !== undefined) server.setTimeout(options.connectionTimeout);
    if (options.maxRequestsPerSocket) server.maxRequestsPerSocket = options.maxRequestsPerSocket;
    return server;
  };
}
