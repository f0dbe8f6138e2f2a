import type { Generated, Insertable, Selectable, Updateable } from 'kysely';

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
  /**
   * epoch ms (a whole second): tokens in the format before migration 051 (no generation in their jti) issued
   * before it are refused; still written, for instances of an older build during an upgrade
   */
  tokens_valid_after: Generated<number>;
  /**
   * the password, role and status changes so far (migration 051): a token of an earlier generation is refused.
   * Only ever raised by 1 in SQL (users.repository.ts: `revokeTokens`), never set to a value read before.
   */
  token_generation: Generated<number>;
  /** the click_count of the user's links that are gone (deleted or expired), kept for the account's lifetime figures */
  deleted_link_clicks: Generated<number>;
  /** of those, the bots' */
  deleted_link_bots: Generated<number>;
}

export type UserRow = Selectable<UsersTable>;
export type NewUserRow = Insertable<UsersTable>;
export type UserUpdate = Updateable<UsersTable>;
