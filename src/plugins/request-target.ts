import type { IncomingMessage } from 'node:http';
import type { HTTPMethods } from 'fastify';
import { AppError } from '../lib/app-error.js';
import { MAX_TARGET_LENGTH } from '../lib/http-limits.js';
import { malformedPercentEncoding } from '../lib/percent-encoding.js';

/**
 * Checks of the raw request that must run before routing (SPEC §12), from Fastify's rewriteUrl
 * (plugins/versioning.ts): percent-encoding of the path and of every query parameter, the length of the
 * request target (414), and the Host header: required in an HTTP/1.1 request (Node's own check answers a bare
 * 400 with no envelope, so it is off in infra/http-server.ts and done here), and never sent twice. A failed check is recorded on the raw
 * request and answered by the root hook `rejectBadTarget`, or by the framework-error handler when the router
 * itself gave up on the path; either way the envelope, with X-Request-Id.
 */

const kBadTarget = Symbol('ferry.badRequestTarget');
type RawWithCheck = IncomingMessage & { [kBadTarget]?: AppError };

export interface RouteFinder {
  findRoute?(opts: { method: HTTPMethods; url: string }): { params?: Record<string, string | undefined> } | null;
}

/** The path parameters that the malformed path segments would have filled, when a route has them there. */
function pathParameterNames(finder: RouteFinder | undefined, method: string | undefined, path: string): string[] {
  const marker = 'ferry0malformed0segment';
  const segments = path.split('/').map((s) => (malformedPercentEncoding(s).length ? marker : s));
  try {
    const found = finder?.findRoute?.({ method: (method ?? 'GET') as HTTPMethods, url: segments.join('/') });
    return Object.entries(found?.params ?? {})
      .filter(([, v]) => v === marker)
      .map(([k]) => k);
  } catch {
    return [];
  }
}

/**
 * Whether the request has more than one Host header. Node keeps the first in `headers.host` and drops the rest,
 * so a proxy that routed by the last one and Ferry would disagree about the request's domain (SPEC §25;
 * RFC 9112 §3.2: a server must answer 400). The raw list is read: a few header names, compared by length first.
 */
export function hasDuplicateHost(req: IncomingMessage): boolean {
  const raw = req.rawHeaders;
  let seen = false;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!;
    if (name.length !== 4 || name.toLowerCase() !== 'host') continue;
    if (seen) return true;
    seen = true;
  }
  return false;
}

function targetProblem(finder: RouteFinder | undefined, req: IncomingMessage): AppError | null {
  const url = req.url ?? '/';
  if (url.length > MAX_TARGET_LENGTH) {
    return new AppError('URI_TOO_LONG', `The request target is longer than ${MAX_TARGET_LENGTH} characters`, [
      { field: 'path', message: `must be at most ${MAX_TARGET_LENGTH} characters with its query` },
    ]);
  }
  if (req.httpVersion === '1.1' && typeof req.headers.host !== 'string') {
    return new AppError('VALIDATION_ERROR', 'An HTTP/1.1 request needs a Host header', [
      { field: 'Host', message: 'is required (RFC 9112 §3.2)' },
    ]);
  }
  if (hasDuplicateHost(req)) {
    const detail = { field: 'Host', message: 'must be sent once (RFC 9112 §3.2)' };
    return new AppError('VALIDATION_ERROR', 'The request has more than one Host header', [detail]);
  }
  const malformed = malformedPercentEncoding(url);
  if (!malformed.length) return null;
  const q = url.indexOf('?');
  const names =
    malformed[0]!.field === 'path' ? pathParameterNames(finder, req.method, q === -1 ? url : url.slice(0, q)) : [];
  const details = malformed.flatMap((d) =>
    d.field === 'path' && names.length ? names.map((field) => ({ field, message: d.message })) : [d],
  );
  return new AppError('VALIDATION_ERROR', 'The request URL has malformed percent-encoding', details);
}

/** Checks the raw request once, records what is wrong with it, and says whether anything is. */
export function checkRequestTarget(finder: RouteFinder | undefined, req: IncomingMessage): boolean {
  const problem = targetProblem(finder, req);
  if (problem) (req as RawWithCheck)[kBadTarget] = problem;
  return problem !== null;
}

/** What checkRequestTarget found wrong with this request, if anything. */
export function badTargetError(req: IncomingMessage): AppError | null {
  return (req as RawWithCheck)[kBadTarget] ?? null;
}

/** The root onRequest hook that answers a bad request target with its error. */
export function rejectBadTarget(request: { raw: IncomingMessage }, _reply: unknown, done: (err?: Error) => void): void {
  const err = (request.raw as RawWithCheck)[kBadTarget];
  if (err) done(err);
  else done();
}
