import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';

// A client's X-Request-Id is kept when it is 1-128 characters that are safe in a header and a log line.
const SAFE_REQUEST_ID = /^[A-Za-z0-9._:@+=-]{1,128}$/;

/** Fastify's genReqId: the client's sane X-Request-Id, or a new UUID. */
export function requestIdFrom(req: IncomingMessage): string {
  const sent = req.headers['x-request-id'];
  return typeof sent === 'string' && SAFE_REQUEST_ID.test(sent) ? sent : randomUUID();
}

async function requestIdPlugin(app: FastifyInstance): Promise<void> {
  // Set first thing, so that every response — errors from any later stage included — carries it. A callback
  // hook: no promise per request (this runs on the redirect's hot path too).
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id);
    done();
  });
}

export default fp(requestIdPlugin, { name: 'ferry-request-id' });
