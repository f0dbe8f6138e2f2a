import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { dependencyError } from '../infra/dependency-faults.js';
import { AppError, type ErrorDetail } from '../lib/app-error.js';
import type { Clock } from '../lib/clock.js';
import { buildEnvelope } from '../lib/error-envelope.js';
import { INSTANT_RULE } from '../lib/instant.js';
import { ACCEPT_PATCH } from './content-type.js';

/**
 * The one error model (SPEC §2): AppErrors thrown by services, validation errors, framework errors (bad JSON,
 * too large, wrong media type, bad URL) and unexpected failures all leave as the same envelope. A 5xx is
 * logged in full under the request id and answered with a masked message.
 */

interface AjvLikeError {
  instancePath?: string;
  schemaPath?: string;
  keyword: string;
  message?: string;
  params?: Record<string, unknown>;
}

/** What a format means, with an example (SPEC §12: every message names what is allowed). */
const FORMAT_RULES: Record<string, string> = {
  'date-time': INSTANT_RULE,
  email: 'must be a valid e-mail address',
  uri: 'must be an absolute URI, e.g. https://example.com/page',
  uuid: 'must be a UUID, e.g. 123e4567-e89b-12d3-a456-426614174000',
};

const listed = (values: unknown[]): string =>
  [...new Set(values.map((v) => (v === null ? 'null' : typeof v === 'string' ? v : JSON.stringify(v))))].join(', ');

/**
 * One message for everything Ajv said about one field, naming what is allowed: a union of constants
 * (TypeBox's enums) lists its values, a format gives an example, alternative types are joined with "or".
 */
function fieldMessage(errors: AjvLikeError[]): string {
  const allowed: unknown[] = [];
  for (const e of errors) {
    if (e.keyword === 'const') allowed.push(e.params?.allowedValue);
    if (e.keyword === 'enum' && Array.isArray(e.params?.allowedValues))
      allowed.push(...(e.params.allowedValues as unknown[]));
  }
  const nullable = errors.some((e) => e.keyword === 'type' && e.params?.type === 'null');
  if (allowed.length) return `must be one of: ${listed(nullable ? [...allowed, null] : allowed)}`;
  const format = errors.find((e) => e.keyword === 'format');
  if (format) {
    const name = String(format.params?.format ?? '');
    const rule = FORMAT_RULES[name] ?? `must be a valid ${name}`;
    return nullable ? `${rule}, or null` : rule;
  }
  if (errors.some((e) => e.keyword === 'additionalProperties')) return 'is not a field of this resource';
  const types = errors.filter((e) => e.keyword === 'type').map((e) => String(e.params?.type));
  // A type error and a rule of the other branch (e.g. "must be null" next to "must NOT have more than 8
  // characters"): the rule is what the client needs to hear, with null as the alternative.
  const rule = errors.find((e) => !['type', 'anyOf', 'oneOf', 'const', 'enum'].includes(e.keyword));
  if (rule) return `${rule.message ?? 'is invalid'}${nullable ? ', or null' : ''}`;
  if (types.length) return `must be ${[...new Set(types.flatMap((t) => t.split(',')))].join(' or ')}`;
  return errors[0]?.message ?? 'is invalid';
}

/**
 * A body that may take one of several shapes (a root `anyOf` of objects: POST /tokens' password or login code)
 * fails every shape at once; only the shape it comes closest to is reported, as if it were the only one: the one
 * that knows most of the fields sent (a field is known to a shape that does not call it "not a field"), then
 * the one with the fewest faults. A body that sends no field any shape knows (e.g. `{}`) is held to the first.
 */
function closestShape(errors: AjvLikeError[]): AjvLikeError[] {
  const shapes = new Map<string, AjvLikeError[]>();
  for (const e of errors) {
    const shape = /^#\/anyOf\/(\d+)\//.exec(e.schemaPath ?? '')?.[1];
    if (shape === undefined) continue;
    const list = shapes.get(shape);
    if (list) list.push(e);
    else shapes.set(shape, [e]);
  }
  if (shapes.size < 2) return errors;
  const unknownTo = (list: AjvLikeError[]) =>
    new Set(list.filter((e) => e.keyword === 'additionalProperties').map((e) => String(e.params?.additionalProperty)));
  const sent = new Set([...shapes.values()].flatMap((list) => [...unknownTo(list)]));
  const ranked = [...shapes.values()].map((list) => ({ list, known: sent.size - unknownTo(list).size }));
  const first = ranked[0]!;
  if (ranked.every((r) => r.known === 0)) return first.list;
  return ranked.reduce((a, b) => (b.known > a.known || (b.known === a.known && b.list.length < a.list.length) ? b : a))
    .list;
}

/** One detail per offending field, named as the client sent it (body field, query parameter, header). */
export function validationDetails(errors: AjvLikeError[], context: string | undefined): ErrorDetail[] {
  const byField = new Map<string, AjvLikeError[]>();
  for (const e of closestShape(errors)) {
    let field = (e.instancePath ?? '').replace(/^\//, '').replace(/\//g, '.').replace(/~1/g, '/').replace(/~0/g, '~');
    const p = e.params ?? {};
    if (e.keyword === 'required' && typeof p.missingProperty === 'string') {
      field = field ? `${field}.${p.missingProperty}` : p.missingProperty;
    } else if (e.keyword === 'additionalProperties' && typeof p.additionalProperty === 'string') {
      field = field ? `${field}.${p.additionalProperty}` : p.additionalProperty;
    }
    if (!field) field = context ?? 'body';
    if (context === 'headers') field = headerName(field);
    const list = byField.get(field);
    if (list) list.push(e);
    else byField.set(field, [e]);
  }
  return [...byField].map(([field, errs]) => ({ field, message: fieldMessage(errs) }));
}

const headerName = (lower: string): string =>
  lower
    .split('-')
    .map((w) => w.charAt(0).toUpperCase() + w.slice(1))
    .join('-');

const contextLabel: Record<string, string> = {
  body: 'Request body is invalid',
  querystring: 'Query parameters are invalid',
  params: 'Path parameters are invalid',
  headers: 'Request headers are invalid',
};

/** Maps anything thrown during a request to an AppError. */
export function toAppError(err: unknown): AppError {
  if (err instanceof AppError) return err;
  const e = err as FastifyError & { validation?: AjvLikeError[]; validationContext?: string };
  if (e.validation) {
    return new AppError(
      'VALIDATION_ERROR',
      contextLabel[e.validationContext ?? ''] ?? 'Request is invalid',
      validationDetails(e.validation, e.validationContext),
    );
  }
  switch (e.code) {
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new AppError('MALFORMED_JSON', 'Request body is not valid JSON');
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new AppError('PAYLOAD_TOO_LARGE', 'Request body is larger than the limit');
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
    case 'FST_ERR_CTP_INVALID_TYPE':
      return new AppError('UNSUPPORTED_MEDIA_TYPE', 'Request body must be application/json');
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new AppError('VALIDATION_ERROR', 'Content-Length does not match the body', [
        { field: 'Content-Length', message: 'does not match the body' },
      ]);
    case 'FST_ERR_BAD_URL':
    case 'FST_ERR_ASYNC_CONSTRAINT':
      return new AppError('VALIDATION_ERROR', 'The request URL is malformed');
    default:
      break;
  }
  if (err instanceof SyntaxError && e.statusCode === 400)
    return new AppError('MALFORMED_JSON', 'Request body is not valid JSON');
  // The database, Redis or the disk failing: 503 with Retry-After (SPEC §17), never a 500.
  const dependency = dependencyError(err);
  if (dependency) return dependency;
  const status = e.statusCode ?? 500;
  if (status === 429) return new AppError('RATE_LIMITED', 'Too many requests');
  if (status === 413) return new AppError('PAYLOAD_TOO_LARGE', 'Request body is larger than the limit');
  if (status === 415) return new AppError('UNSUPPORTED_MEDIA_TYPE', 'Unsupported media type');
  if (status === 404) return new AppError('NOT_FOUND', 'Not found');
  if (status === 503) return new AppError('SERVICE_UNAVAILABLE', 'Service unavailable', [], { 'Retry-After': '5' });
  if (status >= 400 && status < 500) return new AppError('VALIDATION_ERROR', e.message || 'Bad request');
  return new AppError('INTERNAL_ERROR', 'Internal server error');
}

export function sendAppError(reply: FastifyReply, err: AppError, now: number): FastifyReply {
  for (const [k, v] of Object.entries(err.headers)) reply.header(k, v);
  // Errors are never stored by caches (RFC 9111; RFC 6585 for 429).
  reply.header('cache-control', 'no-store');
  reply.removeHeader('etag');
  return reply
    .code(err.status)
    .type('application/json; charset=utf-8')
    .send(JSON.stringify(buildEnvelope(err, String(reply.request.id), now)));
}

async function errorsPlugin(app: FastifyInstance, opts: { clock: Clock; onStorageFault?: () => void }): Promise<void> {
  app.setErrorHandler((err: unknown, request: FastifyRequest, reply: FastifyReply) => {
    const appError = toAppError(err);
    // Readiness names the storage while writes fail (infra/storage-health.ts).
    if (appError.code === 'STORAGE_UNAVAILABLE') opts.onStorageFault?.();
    // A 503 because a dependency is down (Redis for the deny list, the database, a full disk) is not a failure
    // of this request: the dependency's connection logs the outage once per episode (infra/redis.ts,
    // infra/dependency-faults.ts), not once per request.
    if (appError.status === 503) {
      request.log.debug({ code: appError.code }, 'request answered 503: a dependency is unavailable');
    } else if (appError.status >= 500) {
      request.log.error({ err }, 'request failed');
    } else if (!(err instanceof AppError)) {
      request.log.info({ code: appError.code, reason: (err as Error).message }, 'request rejected');
    }
    // RFC 5789 §2.2: a PATCH in an unsupported format names the formats that are accepted.
    if (appError.code === 'UNSUPPORTED_MEDIA_TYPE' && request.method === 'PATCH')
      reply.header('accept-patch', ACCEPT_PATCH);
    return sendAppError(reply, appError, opts.clock.now());
  });
}

export default fp(errorsPlugin, { name: 'ferry-errors' });
