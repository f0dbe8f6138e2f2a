import type { Scope } from '../api/client';

/**
 * What each scope lets a key do (SPEC §14), in the order the form lists them. A Record over the API's own
 * scope type: a scope added to the document fails the type check until it is described here.
 */
export const SCOPE_LABELS: Record<Scope, string> = {
  'links:read': 'Read links (and their QR codes and clicks)',
  'links:write': 'Create, change and delete links',
  'stats:read': 'Read analytics',
  'orders:read': 'Read orders',
  'orders:write': 'Create and cancel orders',
  'users:read': 'Read the account',
  'webhooks:read': 'Read webhooks and their deliveries',
  'webhooks:write': 'Create, change, test and delete webhooks',
};

export const SCOPES = Object.keys(SCOPE_LABELS) as Scope[];
