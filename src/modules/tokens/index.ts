/**
 * The tokens module's public face, for the wiring (app.ts, app-modules.ts, shared-state.ts, the CLI): the
 * module, the JWT signer it and the auth plugin share, the secret it signs with, and the deny lists a
 * revoked token is kept in (in the database, or in Redis when instances share state).
 */
export { createTokensModule } from './tokens.module.js';
export { createJwt } from './jwt.js';
export { LOGIN_CODE_TTL_MS, type LoginCodes } from './login-codes.js';
export { loadJwtSecret } from './secret.js';
export { createRedisDenyList } from './redis-deny-list.js';
export { createSqlDenyList, type TokenDenyList } from './tokens.repository.js';
