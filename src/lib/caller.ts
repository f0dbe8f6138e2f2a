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
  apiKey: { id: number; scopes: readonly Scope[]; domains?: readonly number[] | null } | null;
  /** the client's address (TRUST_PROXY applied), set per request by the access hook: the audit log's `ip` */
  ip?: string | null;
}

/** Whether the caller may act on a link or domain with this domain id: not when its API key is limited to others. */
export const keyAllowsDomain = (caller: Caller | null, domainId: number): boolean =>
  !caller?.apiKey?.domains || caller.apiKey.domains.includes(domainId);

export const isAdmin = (caller: Caller | null): boolean => caller?.role === 'admin';
