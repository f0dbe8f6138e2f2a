import type { FastifyRequest } from 'fastify';
import Type from 'typebox';
import type { Caller } from './caller.js';
import { IdParam } from './common.schemas.js';

/** The word that stands for the caller's own id in a nested user path (SPEC §13). */
export const ME = 'me';

/**
 * The `{id}` of a nested user path (`/users/{id}/links`, `/users/{id}/orders/{order_id}`, …): a user id, or
 * `me` for the caller. Resolved by the access policy before validation (resolveMe), so the handler always
 * receives a number: the static type says so.
 */
export const UserIdPathParam = Type.Unsafe<number>(
  Type.Union([IdParam, Type.Literal(ME)], {
    description: "A user id (at most 2^53-1), or `me` for the caller's own id (a token is then required)",
  }),
);

export const UserPathParams = Type.Object({ id: UserIdPathParam }, { additionalProperties: false });

/**
 * Replaces `me` in the request's `id` path parameter with the caller's id. Called by the `selfOrAdmin`
 * access policy (plugins/auth.ts), which has established the caller: every route under that policy accepts
 * `me`, and `me` without a token is the policy's 401.
 */
export function resolveMe(request: FastifyRequest, caller: Caller): void {
  const params = request.params as { id?: string } | undefined;
  if (params?.id === ME) params.id = String(caller.userId);
}
