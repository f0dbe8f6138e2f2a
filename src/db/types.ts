import type { Generated, Insertable, Selectable, Updateable } from 'kysely';

/**
 * Table types. Every instant is stored as integer milliseconds since the epoch (bigint on PostgreSQL,
 * INTEGER on SQLite): the same comparisons, keyset cursors and bucket arithmetic work on both engines, and
 * the API turns them into ISO 8601 strings at the edge.
 */
export interface UsersTable {
  id: Generated<number>;
  username: string;
  username_lower: string;
  email: string;
  email_lower: string;
  password_hash: string;
  role: 'user' | 'admin';
  status: 'pending' | 'active' | 'suspended';
  name: string | null;
  age: number | null;
  version: number;
  created_at: number;
  updated_at: number;
}

export interface TokensTable {
  jti: string;
  user_id: number;
  issued_at: number;
  expires_at: number;
}

export interface RevokedTokensTable {
  jti: string;
  expires_at: number;
}

export interface Database {
  users: UsersTable;
  tokens: TokensTable;
  revoked_tokens: RevokedTokensTable;
}

export type UserRow = Selectable<UsersTable>;
export type NewUserRow = Insertable<UsersTable>;
export type UserUpdate = Updateable<UsersTable>;
