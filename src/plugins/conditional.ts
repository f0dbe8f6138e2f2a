import { createHash } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { AppError } from '../lib/app-error.js';

/**
 * ETag, If-None-Match and Cache-Control for every GET (SPEC §1, RFC 9110 §13, RFC 9111).
 *
 * Written here rather than taken from @fastify/etag: that plugin tags every response (errors and POSTs
 * included) and compares If-None-Match as one exact string, while RFC 9110 §13.1.2 asks for a weak
 * comparison over a list and `*`. A route may set its own ETag (users do: their version makes it exact and
 * lets If-Match be checked without serialising); otherwise the tag is a hash of the bytes sent.
 */
export function etagMatches(header: string | undefined, etag: string, weak: boolean): boolean {
  if (!header) return false;
  if (header.trim() === '*') return true;
  const opaque = (t: string): string => t.trim().replace(/^W\//, '');
  const target = weak ? opaque(etag) : etag;
  return header.split(',').some((candidate) => {
    const c = candidate.trim();
    if (!weak && c.startsWith('W/')) return false; // strong comparison never matches a weak tag
    return (weak ? opaque(c) : c) === target;
  });
}

/**
 * If-Match for writes (RFC 9110 §13.1.1): the method must not be performed when the tag is stale. Services
 * call this with the current representation's tag.
 */
export function assertIfMatch(ifMatch: string | undefined, currentEtag: string): void {
  if (ifMatch !== undefined && !etagMatches(ifMatch, currentEtag, false)) {
    throw new AppError('PRECONDITION_FAILED', 'If-Match does not match the current representation', [
      { field: 'If-Match', message: `the current ETag is ${currentEtag}` },
    ]);
  }
}

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
