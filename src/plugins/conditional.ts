import { createHash } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { etagMatches } from '../lib/etag.js';

/**
 * ETag, If-None-Match and Cache-Control for every GET (SPEC §1, RFC 9110 §13, RFC 9111).
 *
 * Written here rather than taken from @fastify/etag: that plugin tags every response (errors and POSTs
 * included) and compares If-None-Match as one exact string, while RFC 9110 §13.1.2 asks for a weak
 * comparison over a list and `*`. A route may set its own ETag (users do: their version makes it exact and
 * lets If-Match be checked without serialising); otherwise the tag is a hash of the bytes sent.
 */
async function conditionalPlugin(app: FastifyInstance): Promise<void> {
  app.addHook('onSend', async (request, reply, payload) => {
    const method = request.method;
    const readable = method === 'GET' || method === 'HEAD';
    const status = reply.statusCode;
    if (readable && status === 200 && (typeof payload === 'string' || Buffer.isBuffer(payload))) {
      let etag = reply.getHeader('etag') as string | undefined;
      if (!etag) {
        etag = `"${createHash('sha1').update(payload).digest('base64url')}"`;
        reply.header('etag', etag);
      }
      if (!reply.hasHeader('cache-control')) reply.header('cache-control', 'private, no-cache');
      if (etagMatches(request.headers['if-none-match'], etag, true)) {
        reply.code(304);
        return '';
      }
      return payload;
    }
    if (!reply.hasHeader('cache-control')) {
      reply.header('cache-control', readable && status < 400 ? 'private, no-cache' : 'no-store');
    }
    return payload;
  });
}

export default fp(conditionalPlugin, { name: 'ferry-conditional' });
