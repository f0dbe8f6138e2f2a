import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import Type from 'typebox';
import type { RedirectStatus } from '../../config.js';
import type { ClickQueue } from '../../infra/click-queue.js';
import { AppError } from '../../lib/app-error.js';
import type { Clock } from '../../lib/clock.js';
import { ErrorEnvelopeSchema, ref } from '../../lib/common.schemas.js';
import { sendAppError } from '../../plugins/errors.js';
import type { RedirectTarget } from './link-cache.js';
import type { LinksService } from './links.service.js';
import { ERROR_PAGE_CSP, prefersHtml, redirectErrorPage } from './redirect-page.js';
import { CODE_PATTERN } from './short-code.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** false: no "incoming request" / "request completed" lines for this route (app.ts's LogController) */
    accessLog?: boolean;
    /** marks the redirect route (request metrics put it in the redirect latency histogram) */
    redirect?: boolean;
  }
}

export interface RedirectRoutesOptions {
  links: Pick<LinksService, 'resolve'>;
  clicks: Pick<ClickQueue, 'enqueue'>;
  clock: Clock;
  status: RedirectStatus;
  /** whether each redirect writes the two access-log lines (links.module.ts decides) */
  accessLog: boolean;
}

export const clip = (value: string | undefined, max: number): string | null =>
  value === undefined || value === '' ? null : value.length > max ? value.slice(0, max) : value;

/** The route's template as Fastify reports it (request.routeOptions.url): the metrics' `route` label. */
export const REDIRECT_ROUTE_URL = `/:code(${CODE_PATTERN})`;
/** Every visit must reach the service to be counted (SPEC §6). */
export const REDIRECT_CACHE_CONTROL = 'private, no-store';

const errorBody = (status: 404 | 410) => ({
  description: status === 404 ? 'No link has this code, or it was deleted' : 'The link has expired (LINK_EXPIRED)',
  content: {
    'application/json': { schema: ref(ErrorEnvelopeSchema) },
    'text/html': { schema: Type.String({ maxLength: 4096, pattern: '^<!doctype html>', description: 'A small page for browsers (Accept prefers text/html)' }) },
  },
});

/**
 * GET /{code} (SPEC §6), in its own encapsulated context beside the JSON API: none of the API's hooks
 * (CORS, content types, ETag) run here. The hot path is one cache lookup (LinksService.resolve, synchronous
 * on a hit) and one enqueue; the click is written later in a batch. The code is constrained in the route
 * itself, so anything else falls through to the ordinary 404, and static routes (/docs, /healthz,
 * /v3/api-docs, ...) always win in find-my-way.
 */
export const redirectRoutes: FastifyPluginAsync<RedirectRoutesOptions> = async (app, opts) => {
  const { links, clicks, clock, status } = opts;

  const fail = (request: FastifyRequest, reply: FastifyReply, code: 404 | 410): FastifyReply => {
    reply.header('vary', 'Accept');
    if (prefersHtml(request.headers.accept)) {
      return reply
        .code(code)
        .header('cache-control', 'no-store')
        .header('content-security-policy', ERROR_PAGE_CSP)
        .header('x-content-type-options', 'nosniff')
        .type('text/html; charset=utf-8')
        .send(redirectErrorPage(code));
    }
    const err = code === 404 ? new AppError('NOT_FOUND', 'No link has this code') : new AppError('LINK_EXPIRED', 'This link has expired');
    return sendAppError(reply, err, clock.now());
  };

  const answer = (request: FastifyRequest, reply: FastifyReply, target: RedirectTarget): FastifyReply => {
    if (target.kind !== 'link') return fail(request, reply, target.kind === 'expired' ? 410 : 404);
    // HEAD answers the same headers and is not a visit.
    if (request.method === 'GET') {
      clicks.enqueue({
        linkId: target.id,
        shortCode: target.code,
        clickedAt: clock.now(),
        ip: clip(request.ip, 45),
        userAgent: clip(request.headers['user-agent'], 512),
        referrer: clip(request.headers.referer, 2048),
      });
    }
    // Location is the stored URL verbatim: it was validated at creation (printable ASCII, no CR/LF).
    return reply.code(status).header('location', target.url).header('cache-control', REDIRECT_CACHE_CONTROL).send();
  };

  const responses: Record<number, unknown> = {
    [status]: {
      description: `Redirect to the link's original_url (status set by REDIRECT_STATUS; ${status} here)`,
      headers: {
        Location: { type: 'string', description: 'The original_url, exactly as stored' },
        'Cache-Control': { type: 'string', description: 'private, no-store: every visit reaches the service and is counted' },
      },
      type: 'null',
    },
    404: errorBody(404),
    410: errorBody(410),
  };

  app.get(REDIRECT_ROUTE_URL, {
    // The route url carries a pattern, so it is not the plain `/:code` the metrics recognise: say it.
    config: { accessLog: opts.accessLog, redirect: true },
    schema: {
      operationId: 'followShortLink',
      tags: ['redirect'],
      summary: 'Follow a short link (HEAD: the same headers, and no click is recorded)',
      security: [],
      params: Type.Object({ code: Type.String({ pattern: CODE_PATTERN, maxLength: 8, description: 'The short code (case-sensitive)' }) }),
      response: responses,
    },
  }, (request, reply) => {
    const target = links.resolve((request.params as { code: string }).code);
    return target instanceof Promise ? target.then((t) => answer(request, reply, t)) : answer(request, reply, target);
  });
};
