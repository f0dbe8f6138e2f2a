/**
 * The two-factor module's public face, for the wiring (app-core-modules.ts: the tokens module's second step and
 * the auth plugin's TOTP_REQUIRED_FOR_ADMINS check are given its service) and the CLI (`ferry users reset-2fa`).
 */
export { createTwoFactorModule } from './two-factor.module.js';
export type { TwoFactorService, SecondFactorUsed } from './two-factor.service.js';
