import fastifyStatic from '@fastify/static';
import type { FastifyPluginAsync, FastifyReply } from 'fastify';
import { AppError } from '../../lib/app-error.js';
import type { Clock } from '../../lib/clock.js';
import { sendAppError } from '../../plugins/errors.js';
import securityHeadersPlugin from '../../plugins/security-headers.js';
import type { WebAssets } from './web-assets.js';

export interface DashboardRoutesOptions {
  /** the built dashboard, or null when it was not built (then /app answers 503) */
  assets: WebAssets | null;
  publicBaseUrl: string;
  clock: Clock;
  /**
   * What `GET /` means on a request's host (SPEC §19): undefined on the default domain (the dashboard), a URL
   * on a verified domain with a root_redirect, null on one without
   */
  domainRoot?: (host: string) => string | null | undefined;
}

/** Where the dashboard lives; `app` is a reserved short code for this reason (modules/links/short-code.ts). */
export const DASHBOARD_PATH = '/app';

/** Hashed file names change with their content, so a browser may keep them for good. */
const ASSET_MAX_AGE = '365d';

/**
 * The dashboard (SPEC §16), in its own context beside the JSON API: `GET /` leads to it; `/app` and every
 * client-side route under it answer index.html (revalidated on every load, so a new build is picked up at
 * once); `/app/assets/*` are Vite's hashed files, cached as immutable and served pre-compressed (gzip or
 * brotli, written by the build) to clients that accept it. A missing asset is a 404, never index.html (a
 * script tag would otherwise receive HTML). The strict CSP of the `app` profile covers only this context;
 * the API keeps its own headers. None of these routes are in the OpenAPI document: they are not the API.
 */
export const dashboardRoutes: FastifyPluginAsync<DashboardRoutesOptions> = async (app, opts) => {
  app.get('/', { schema: { hide: true } }, (request, reply) => {
    const root = opts.domainRoot?.(request.host);
    if (root === undefined) return reply.redirect(DASHBOARD_PATH, 302);
    if (root === null)
      return sendAppError(reply, new AppError('NOT_FOUND', 'This domain has no page of its own'), opts.clock.now());
    return reply.header('cache-control', 'private, no-store').redirect(root, 302);
  });

  await app.register(securityHeadersPlugin, { profile: 'app', publicBaseUrl: opts.publicBaseUrl });
  const { assets } = opts;
  if (assets === null) {
    const notBuilt = (reply: FastifyReply) =>
      sendAppError(
        reply,
        new AppError(
          'SERVICE_UNAVAILABLE',
          'The dashboard is not built on this server: run `npm run build` and restart',
        ),
        opts.clock.now(),
      );
    app.get(DASHBOARD_PATH, { schema: { hide: true } }, (_request, reply) => notBuilt(reply));
    app.get(`${DASHBOARD_PATH}/*`, { schema: { hide: true } }, (_request, reply) => notBuilt(reply));
    return;
  }

  await app.register(fastifyStatic, {
    root: assets.assets,
    prefix: `${DASHBOARD_PATH}/assets/`,
    index: false,
    // A folder is never an asset: 404 like any missing file (send would answer 403 for it).
    allowedPath: (pathName) => !pathName.endsWith('/'),
    preCompressed: true,
    immutable: true,
    maxAge: ASSET_MAX_AGE,
    schemaHide: true,
  });
  const index = (reply: FastifyReply) =>
    reply.header('cache-control', 'no-cache').sendFile('index.html', assets.root, { cacheControl: false });
  app.get(DASHBOARD_PATH, { schema: { hide: true } }, (_request, reply) => index(reply));
  app.get(`${DASHBOARD_PATH}/*`, { schema: { hide: true } }, (_request, reply) => index(reply));
};
