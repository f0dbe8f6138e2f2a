import type { Scope } from './scopes.js';

/** Who is calling, as established by the bearer token (null: anonymous). Role is read fresh from the database. */
export interface Caller {
  userId: number;
  role: 'user' | 'admin';
  status: 'pending' | 'active' | 'suspended';
  /** the JWT's id ('' for an API key) */
  jti: string;
  exp: number;
  /** set when the credential is an API key: it acts as its user, limited to these scopes */
  apiKey: { id: number; scopes: readonly Scope[] } | null;
}

export const isAdmin = (caller: Caller | null): boolean => caller?.role === 'admin';
