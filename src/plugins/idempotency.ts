import type { FastifyInstance, FastifyReply, FastifyRequest, RouteOptions } from 'fastify';
import fp from 'fastify-plugin';
import type { Transaction } from 'kysely';
import type { Database } from '../db/types.js';
import { validationError } from '../lib/app-error.js';
import { ErrorEnvelopeSchema, ref } from '../lib/common.schemas.js';
import { requestFingerprint } from '../lib/request-fingerprint.js';

/**
 * Idempotent POSTs (SPEC §5; IETF draft-ietf-httpapi-idempotency-key-header; Stripe's practice). A route
 * opts in with one line, `config: { idempotency: 'required' | 'optional' }`, and answers through
 * `reply.sendIdempotent(work)`.
 *
 * The design, stage by stage of the request:
 * - onRoute: the route's schema gains the `Idempotency-Key` header (required or optional; 1-255 printable
 *   ASCII), its 409/422 responses and the `Idempotent-Replayed` response header, so Fastify validates the key
 *   with the body and the OpenAPI document describes it.
 * - auth (onRequest), parsing, validation: a request rejected there (401, 403, 413, 415, 400) never reaches
 *   the layer, so nothing is stored and the key stays unused.
 * - preHandler (added last to the route): claims the key for the caller's scope (`user:{id}`; anonymous
 *   callers of optional routes: `ip:{client ip}`, proxy-aware). The claim is an INSERT decided by the primary
 *   key; a known key is replayed (stored status, Location and body, `Idempotent-Replayed: true`), refused
 *   with 422 (other request) or 409 + Retry-After (in flight). See IdempotencyKeys.claim
 *   (modules/idempotency/idempotency.service.ts implements it).
 * - handler: `reply.sendIdempotent(work)` runs `work(tx)` in one database transaction and, in that same
 *   transaction, stores the response `work` returns. The work and its stored result commit together: a crash
 *   anywhere leaves either both or neither. The handler passes `tx` to its service; services take an
 *   optional transaction, so they stay unaware of idempotency.
 * - failure: if the work throws (a business rule, a database error), its transaction rolls back and the claim
 *   is released at once, so the client may retry with the same key. Unlike Stripe, errors are not replayed:
 *   nothing happened, and a stored error would only block a legitimate retry. A request that dies without
 *   releasing (process killed) leaves a lock that expires after the lock timeout (60 s); a request that
 *   outlives its lock cannot complete (the stored-response UPDATE is conditional on its lock) and rolls back.
 * - expiry: keys live IDEMPOTENCY_TTL_SECONDS from their claim; an expired key is forgotten (the same key
 *   then starts a new request) and a background job purges them (app.ts).
 */
export type IdempotencyMode = 'required' | 'optional';

/** What a completed request answered; stored with its key and replayed for a retry. */
export interface StoredResponse {
  status: number;
  /** only the headers that matter to a retrying client (Location) */
  headers: Record<string, string>;
  body: unknown;
}

/** A key this request holds: the caller's scope, the key, and the lock that proves the hold. */
export interface IdempotencyClaim {
  scope: string;
  key: string;
  lockId: string;
}

export interface ClaimRequest {
  scope: string;
  key: string;
  userId: number | null;
  fingerprint: string;
}

export type ClaimOutcome = { kind: 'claimed'; claim: IdempotencyClaim } | { kind: 'replay'; response: StoredResponse };

/**
 * What this plugin needs of the keys' store: the port modules/idempotency implements and app.ts hands in, so
 * that the HTTP layer knows no module (layers: plugins <- modules).
 */
export interface IdempotencyKeys {
  claim(req: ClaimRequest): Promise<ClaimOutcome>;
  completeWith(
    claim: IdempotencyClaim,
    work: (tx: Transaction<Database>) => Promise<StoredResponse>,
  ): Promise<StoredResponse>;
  release(claim: IdempotencyClaim): Promise<void>;
}

/**
 * The work of an idempotent request: do it with `tx` and say what to answer. `tx` is undefined when the
 * request carries no key (optional routes): nothing is stored then, and the work's services use their own
 * transactions as for any other request.
 */
export type IdempotentWork = (tx: Transaction<Database> | undefined) => Promise<StoredResponse>;

declare module 'fastify' {
  interface FastifyContextConfig {
    idempotency?: IdempotencyMode;
  }
  interface FastifyRequest {
    idempotencyClaim: (IdempotencyClaim & { settled: boolean }) | null;
  }
  interface FastifyReply {
    sendIdempotent(work: IdempotentWork): Promise<FastifyReply>;
  }
}

export const IDEMPOTENCY_KEY_HEADER = 'Idempotency-Key';
export const IDEMPOTENT_REPLAYED_HEADER = 'Idempotent-Replayed';

const keySchema = (mode: IdempotencyMode) => ({
  type: 'string',
  minLength: 1,
  maxLength: 255,
  pattern: '^[ -~]+$',
  description:
    `${mode === 'required' ? 'Required. ' : 'Optional. '}1-255 printable ASCII characters, unique per request (a UUID v4 is a good choice). ` +
    'A retry with the same key and the same request returns the first response (with Idempotent-Replayed: true) and does nothing again; ' +
    'the same key with another request is 422, and while the first request is in flight 409. Keys are scoped to the caller and kept for ' +
    'IDEMPOTENCY_TTL_SECONDS (24 h by default).',
});

type RouteSchema = { headers?: Record<string, unknown>; response?: Record<string, unknown> };

/** Adds the header parameter, the 409/422 responses and the replay header to a route's schema. */
function declareInSchema(route: RouteOptions, mode: IdempotencyMode): void {
  route.schema ??= {};
  const schema = route.schema as RouteSchema;
  const headers = (schema.headers ?? { type: 'object', properties: {} }) as {
    properties?: Record<string, unknown>;
    required?: string[];
  };
  // Lower case: with a custom validator compiler (plugins/validation.ts) Fastify does not lower-case header
  // schemas, and Node hands header names over in lower case. Field names are case-insensitive (RFC 9110 §5.1).
  const name = IDEMPOTENCY_KEY_HEADER.toLowerCase();
  schema.headers = {
    ...headers,
    type: 'object',
    properties: { ...headers.properties, [name]: keySchema(mode) },
    ...(mode === 'required' ? { required: [...(headers.required ?? []), name] } : {}),
  };
  const response = (schema.response ??= {});
  for (const [status, s] of Object.entries(response)) {
    if (!/^2\d\d$/.test(status)) continue;
    const existing = (s as { headers?: Record<string, unknown> }).headers;
    response[status] = {
      ...(s as object),
      headers: {
        ...existing,
        [IDEMPOTENT_REPLAYED_HEADER]: {
          type: 'string',
          enum: ['true'],
          description:
            'Present on a replay: this is the stored response of an earlier request with the same Idempotency-Key',
        },
      },
    };
  }
  response[409] ??= ref(ErrorEnvelopeSchema);
  response[422] ??= ref(ErrorEnvelopeSchema);
}

/** RFC 9110 lets a receiver combine repeated fields; the draft forbids more than one Idempotency-Key, so count them. */
function keyFieldCount(request: FastifyRequest): number {
  let n = 0;
  const raw = request.raw.rawHeaders;
  for (let i = 0; i < raw.length; i += 2) if (raw[i]!.toLowerCase() === 'idempotency-key') n += 1;
  return n;
}

async function idempotencyPlugin(app: FastifyInstance, opts: { idempotency: IdempotencyKeys }): Promise<void> {
  const { idempotency } = opts;
  const claimKey = keyClaimer(idempotency);
  const releaseUnsettled = unsettledReleaser(idempotency);
  app.decorateRequest('idempotencyClaim', null);
  app.decorateReply('sendIdempotent', idempotentSender(idempotency, releaseUnsettled));

  app.addHook('onRoute', (route) => {
    const mode = route.config?.idempotency;
    if (mode === undefined) return;
    if (mode !== 'required' && mode !== 'optional')
      throw new Error(`${route.url}: config.idempotency must be 'required' or 'optional'`);
    declareInSchema(route, mode);
    route.preHandler = [...[route.preHandler ?? []].flat(), claimKey];
    // Released before the answer leaves (onSend), so a client retrying the moment it reads an error finds the
    // key free; onResponse stays as the net for a response that never reached onSend.
    const releaseBeforeSend = async (request: FastifyRequest, _reply: FastifyReply, payload: unknown) => {
      await releaseUnsettled(request);
      return payload;
    };
    route.onSend = [...[route.onSend ?? []].flat(), releaseBeforeSend];
    route.onResponse = [...[route.onResponse ?? []].flat(), releaseUnsettled];
  });
}

/** The preHandler of an idempotent route: claims the request's key, or answers the stored response. */
function keyClaimer(idempotency: IdempotencyKeys) {
  return async function claimKey(request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | undefined> {
    const key = request.headers['idempotency-key'];
    if (key === undefined) return undefined; // an optional route called without a key (a required key is enforced by the schema)
    if (typeof key !== 'string' || keyFieldCount(request) > 1) {
      throw validationError(
        [{ field: IDEMPOTENCY_KEY_HEADER, message: 'must be sent once' }],
        'Request headers are invalid',
      );
    }
    const caller = request.caller;
    const outcome = await idempotency.claim({
      scope: caller ? `user:${caller.userId}` : `ip:${request.ip}`,
      key,
      userId: caller?.userId ?? null,
      fingerprint: requestFingerprint({
        method: request.method,
        route: request.routeOptions.url ?? request.url,
        params: request.params,
        query: request.query,
        body: request.body,
      }),
    });
    if (outcome.kind === 'replay') {
      const { status, headers, body } = outcome.response;
      reply.headers(headers).header(IDEMPOTENT_REPLAYED_HEADER, 'true');
      return reply.code(status).send(body);
    }
    request.idempotencyClaim = { ...outcome.claim, settled: false };
    return undefined;
  };
}

/** Safety net: a handler that failed before its work ran (or never called sendIdempotent) frees the key. */
function unsettledReleaser(idempotency: IdempotencyKeys) {
  return async function releaseUnsettled(request: FastifyRequest): Promise<void> {
    const claim = request.idempotencyClaim;
    if (!claim || claim.settled) return;
    claim.settled = true;
    await idempotency
      .release(claim)
      .catch((err: unknown) => request.log.error({ err }, 'could not release an idempotency key'));
  };
}

/** reply.sendIdempotent(work): runs the work (with the key: in the transaction that stores its answer) and sends it. */
function idempotentSender(idempotency: IdempotencyKeys, releaseUnsettled: (request: FastifyRequest) => Promise<void>) {
  return async function sendIdempotent(this: FastifyReply, work: IdempotentWork): Promise<FastifyReply> {
    const request = this.request;
    if (!request.routeOptions.config.idempotency) {
      throw new Error(`${request.method} ${request.routeOptions.url} calls sendIdempotent without config.idempotency`);
    }
    const claim = request.idempotencyClaim;
    let result: StoredResponse;
    if (!claim) {
      // No key, nothing to store: no transaction around the work. (Wrapping it anyway made every keyless link
      // creation run its insert under a savepoint through Kysely instead of the prepared insert: 6 statements
      // for 2, bench/ link-create.)
      result = await work(undefined);
    } else {
      try {
        result = await idempotency.completeWith(claim, work);
      } catch (err) {
        // Released before the error is answered, so that a client retrying at once finds the key free.
        await releaseUnsettled(request);
        throw err;
      }
      claim.settled = true;
    }
    return this.code(result.status).headers(result.headers).send(result.body);
  };
}

export default fp(idempotencyPlugin, { name: 'ferry-idempotency' });
