import helmet, { type FastifyHelmetOptions } from '@fastify/helmet';
import Fastify, { type FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';

/**
 * Security headers with @fastify/helmet, in two profiles, registered only in the contexts that need them
 * (the JSON API and the docs). The redirect and the operational endpoints do not pay for them: a 302 carries
 * no content a browser could run or frame.
 *
 * - `api`: JSON is never a document to render, so its CSP allows nothing (`default-src 'none'`), may not be
 *   framed (`frame-ancestors 'none'`, X-Frame-Options DENY), is not sniffed, and sends no Referer onwards.
 * - `docs`: Swagger UI from its bundled assets only: scripts, styles and the spec from this origin
 *   (`'unsafe-inline'` for styles only: Swagger UI sets style attributes), images inline or from here.
 * - `app`: the dashboard (SPEC §16): scripts, styles, images and API calls from this origin only, with no
 *   inline script or style, no eval, and Trusted Types required, so a string can never become code; works
 *   offline because nothing is fetched from anywhere else.
 *
 * HSTS is sent only when PUBLIC_BASE_URL is https (TLS terminates in front of us). On plain http, as on the
 * loopback default, browsers ignore it, and sending it from a host that also serves http is a trap.
 *
 * The headers do not depend on the request, but @fastify/helmet rebuilds helmet's middleware on every request
 * (measured: about 30 µs of a 70 µs API request). So @fastify/helmet computes them once, at start-up, on a
 * throw-away instance, and a hook copies the result onto each reply (about 1 µs).
 */
export type SecurityProfile = 'api' | 'docs' | 'app';

export interface SecurityHeadersOptions {
  profile: SecurityProfile;
  publicBaseUrl: string;
}

const NONE = ["'none'"];
const SELF = ["'self'"];

/**
 * The dashboard's policy; `data:` images are Vite's inlined small assets (the favicon), `blob:` images the
 * QR codes it fetches with the bearer token (an <img src> cannot send it) and shows from memory.
 */
const APP_DIRECTIVES: Record<string, string[]> = {
  defaultSrc: NONE,
  scriptSrc: SELF,
  styleSrc: SELF,
  imgSrc: [...SELF, 'data:', 'blob:'],
  fontSrc: SELF,
  connectSrc: SELF,
  manifestSrc: SELF,
  baseUri: NONE,
  formAction: SELF,
  frameAncestors: NONE,
  requireTrustedTypesFor: ["'script'"],
  trustedTypes: NONE,
};

export function helmetOptions(opts: SecurityHeadersOptions): FastifyHelmetOptions {
  const base = new URL(opts.publicBaseUrl);
  const directives: Record<string, string[]> =
    opts.profile === 'api'
      ? { defaultSrc: NONE, frameAncestors: NONE, baseUri: NONE, formAction: NONE }
      : {
          defaultSrc: NONE,
          scriptSrc: SELF,
          styleSrc: [...SELF, "'unsafe-inline'"],
          imgSrc: [...SELF, 'data:'],
          fontSrc: [...SELF, 'data:'],
          // "Try it out" calls the API at the documented server, which may be another origin than the page's.
          connectSrc: [...SELF, base.origin],
          manifestSrc: SELF,
          baseUri: NONE,
          formAction: SELF,
          frameAncestors: NONE,
        };
  return {
    global: true,
    contentSecurityPolicy: { useDefaults: false, directives: opts.profile === 'app' ? APP_DIRECTIVES : directives },
    strictTransportSecurity: base.protocol === 'https:' ? { maxAge: 31_536_000, includeSubDomains: true } : false,
    referrerPolicy: { policy: 'no-referrer' },
    xFrameOptions: { action: 'deny' },
    crossOriginResourcePolicy: { policy: 'same-origin' },
  };
}

/** Headers every response gets anyway, not helmet's. */
const NOT_HELMET = new Set(['content-type', 'content-length', 'date', 'connection', 'keep-alive']);

/** The headers @fastify/helmet sets with these options, read off one response of a probe instance. */
export async function securityHeaders(opts: SecurityHeadersOptions): Promise<Record<string, string>> {
  const probe = Fastify({ logger: false });
  await probe.register(helmet, helmetOptions(opts));
  probe.get('/', async () => '');
  const res = await probe.inject({ url: '/' });
  await probe.close();
  return Object.fromEntries(
    Object.entries(res.headers)
      .filter(([name]) => !NOT_HELMET.has(name))
      .map(([name, value]) => [name, String(value)]),
  );
}

async function securityHeadersPlugin(app: FastifyInstance, opts: SecurityHeadersOptions): Promise<void> {
  const headers = await securityHeaders(opts);
  // onRequest, so that every answer of the context carries them, errors and 429s included.
  app.addHook('onRequest', (_request, reply, done) => {
    reply.headers(headers);
    done();
  });
}

/** Register inside the context to protect (it applies to that context's routes only). */
export default fp(securityHeadersPlugin, { name: 'ferry-security-headers' });
