import type { Selectable } from 'kysely';

export interface IdempotencyKeysTable {
  /** whose key: `user:{id}`, or `ip:{address}` for anonymous callers of optional routes */
  scope: string;
  idem_key: string;
  user_id: number | null;
  /** sha256 of method, route, parameters and canonical body */
  fingerprint: string;
  /** set while a request holds the key; null once the response is stored */
  lock_id: string | null;
  locked_at: number | null;
  response_status: number | null;
  /** JSON object of the headers that matter (Location) */
  response_headers: string | null;
  /** JSON text of the response body */
  response_body: string | null;
  created_at: number;
  expires_at: number;
}

export type IdempotencyKeyRow = Selectable<IdempotencyKeysTable>;
