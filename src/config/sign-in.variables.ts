/**
 * How people sign in and what is kept of it (SPEC §23, docs/sign-in.md): password sign-in on or off, two-factor
 * required of admins, how long the audit log is kept.
 */
import type { TSchema } from 'typebox';
import { flag, int } from '../lib/env-variables.js';

export const signInVariables = {
  PASSWORD_LOGIN: flag(
    true,
    '`false`: `POST /api/v1/tokens` refuses a username and password (403 `PASSWORD_LOGIN_DISABLED`); the `ferry` CLI still manages accounts and passwords',
  ),
  TOTP_REQUIRED_FOR_ADMINS: flag(
    false,
    '`true`: an admin without two-factor sign-in can do nothing but set it up (every other request 403 `TOTP_SETUP_REQUIRED`)',
  ),
  AUDIT_RETENTION_DAYS: int(365, 1, 36_500, 'How long audit-log entries are kept (days); older ones are swept hourly'),
} satisfies Record<string, TSchema>;
