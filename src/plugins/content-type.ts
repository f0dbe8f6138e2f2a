import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { AppError } from '../lib/app-error.js';

export const ACCEPT_PATCH = 'application/json, application/merge-patch+json';

const hasBody = (headers: FastifyRequest['headers']): boolean =>
  headers['transfer-encoding'] !== undefined ||
  (headers['content-length'] !== undefined && headers['content-length'] !== '0');

/**
 * SPEC §17: a body is read as it arrives, in UTF-8, or not at all. A content coding (gzip, br, …) or another
 * charset is 415 before a byte of the body is read, rather than the bytes being taken for UTF-8 text (a
 * compressed body answered 400 MALFORMED_JSON, a UTF-16 one a field error, and a Latin-1 one was stored with
 * its accents replaced). RFC 7694: the 415 for a content coding says in Accept-Encoding what is accepted.
 */
export function assertPlainBody(request: FastifyRequest): void {
  if (!hasBody(request.headers)) return;
  const codings = (request.headers['content-encoding'] ?? '')
    .split(',')
    .map((c) => c.trim().toLowerCase())
    .filter(Boolean);
  if (codings.some((c) => c !== 'identity')) {
    throw new AppError(
      'UNSUPPORTED_MEDIA_TYPE',
      'Request bodies are accepted without a content coding',
      [{ field: 'Content-Encoding', message: 'must be identity or absent: compressed bodies are not accepted' }],
      { 'Accept-Encoding': 'identity' },
    );
  }
  const charset = /;\s*charset\s*=\s*"?([^";\s]*)/i.exec(request.headers['content-type'] ?? '')?.[1];
  if (charset !== undefined && !/^utf-?8$/i.test(charset)) {
    throw new AppError('UNSUPPORTED_MEDIA_TYPE', 'Request bodies are read as UTF-8', [
      { field: 'Content-Type', message: 'the charset must be utf-8 (or left out)' },
    ]);
  }
}

/**
 * JSON in (SPEC §1): application/json everywhere, application/merge-patch+json (RFC 7396) on PATCH only.
 * Any other body type is 415; on PATCH the 415 names the accepted patch formats in Accept-Patch (RFC 5789).
 * Fastify's built-in text/plain parser is removed so that nothing else slips through.
 */
async function contentTypePlugin(app: FastifyInstance): Promise<void> {
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeAllContentTypeParsers();
  app.addContentTypeParser(['application/json', 'application/merge-patch+json'], { parseAs: 'string' }, parseJson);
  app.addHook('preParsing', async (request) => assertPlainBody(request));

  app.addHook('preValidation', async (request) => {
    if (request.method === 'PATCH' || request.body === undefined) return;
    const type = (request.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
    if (type === 'application/merge-patch+json') {
      throw new AppError('UNSUPPORTED_MEDIA_TYPE', 'application/merge-patch+json is accepted on PATCH only');
    }
  });
}

export default fp(contentTypePlugin, { name: 'ferry-content-type' });
