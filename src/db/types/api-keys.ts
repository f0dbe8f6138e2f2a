import type { Generated, Selectable } from 'kysely';

/** SPEC §14: only a keyed hash of the key is kept; `scopes` is space-separated. */
export interface ApiKeysTable {
  id: Generated<number>;
  user_id: number;
  name: string;
  prefix: string;
  key_hash: string;
  scopes: string;
  created_at: number;
  expires_at: number | null;
  last_used_at: number | null;
  /** the domains the key is limited to, comma-separated ids (0: the default domain); null: not limited */
  domains: string | null;
}

export type ApiKeyRow = Selectable<ApiKeysTable>;
