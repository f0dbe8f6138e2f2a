/** An OpenID provider's subject and the account it signs in as (SPEC §23). */
export interface UserIdentitiesTable {
  issuer: string;
  subject: string;
  user_id: number;
  created_at: number;
  last_sign_in_at: number;
}

/** A single-use code the dashboard exchanges for a token after single sign-on; only its SHA-256 (hex) is kept. */
export interface LoginCodesTable {
  code_hash: string;
  user_id: number;
  expires_at: number;
}
