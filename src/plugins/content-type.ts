import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { AppError } from '../lib/app-error.js';

export const ACCEPT_PATCH = 'application/json, application/merge-patch+json';

/**
 * JSON in (SPEC §1): application/json everywhere, application/merge-patch+json (RFC 7396) on PATCH only.
 * Any other body type is 415; on PATCH the 415 names the accepted patch formats in Accept-Patch (RFC 5789).
 * Fastify's built-in text/plain parser is removed so that nothing else slips through.
 */
async function contentTypePlugin(app: FastifyInstance): Promise<void> {
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeAllContentTypeParsers();
  app.addContentTypeParser(['application/json', 'application/merge-patch+json'], { parseAs: 'string' }, parseJson);

  app.addHook('preValidation', async (request) => {
    if (request.method === 'PATCH' || request.body === undefined) return;
    const type = (request.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
    if (type === 'application/merge-patch+json') {
      throw new AppError('UNSUPPORTED_MEDIA_TYPE', 'application/merge-patch+json is accepted on PATCH only');
    }
  });
}

export default fp(contentTypePlugin, { name: 'ferry-content-type' });
