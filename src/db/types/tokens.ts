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
