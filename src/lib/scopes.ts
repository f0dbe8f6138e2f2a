import Type, { type Static } from 'typebox';

/**
 * What an API key may be allowed to do (SPEC §14). A route names the one scope it needs beside its access
 * policy (`app.access('selfOrAdmin', 'links:read')`, plugins/auth.ts); a route that names none is for
 * bearer JWTs only, and a key is refused there.
 */
export const SCOPES = [
  'links:read',
  'links:write',
  'stats:read',
  'orders:read',
  'orders:write',
  'users:read',
  'webhooks:read',
  'webhooks:write',
] as const;
export type Scope = (typeof SCOPES)[number];

export const ScopeSchema = Type.Union(
  [
    Type.Literal('links:read'),
    Type.Literal('links:write'),
    Type.Literal('stats:read'),
    Type.Literal('orders:read'),
    Type.Literal('orders:write'),
    Type.Literal('users:read'),
    Type.Literal('webhooks:read'),
    Type.Literal('webhooks:write'),
  ],
  { description: SCOPES.join(', ') },
);
// The schema and the list name the same scopes.
const _sameScopes: [Static<typeof ScopeSchema>, Scope] extends [Scope, Static<typeof ScopeSchema>] ? true : never =
  true;
void _sameScopes;
