import { Secret, TOTP } from 'otpauth';
import { expect } from 'vitest';
import type { TestApp } from '../../helpers/app.js';
import type { CreatedUser } from '../../helpers/factories.js';

/** The code an authenticator app shows for this base32 secret at `ms` (the app's clock). */
export const codeAt = (secret: string, ms: number): string =>
  new TOTP({ secret: Secret.fromBase32(secret), digits: 6, period: 30, algorithm: 'SHA1' }).generate({ timestamp: ms });

export const STEP_MS = 30_000;

export interface EnabledTotp {
  secret: string;
  recoveryCodes: string[];
}

/** Sets up and confirms two-factor sign-in for `user` through the API, then moves the clock to the next step. */
export async function enableTotp(t: TestApp, user: Pick<CreatedUser, 'token'>): Promise<EnabledTotp> {
  const setup = await t.request({ method: 'POST', url: '/api/v1/users/me/totp', token: user.token });
  expect(setup.status).toBe(200);
  const secret = setup.body.secret as string;
  const confirm = await t.request({
    method: 'POST',
    url: '/api/v1/users/me/totp/confirm',
    token: user.token,
    payload: { code: codeAt(secret, t.clock.now()) },
  });
  expect(confirm.status).toBe(200);
  t.clock.advance(STEP_MS);
  return { secret, recoveryCodes: confirm.body.recovery_codes as string[] };
}

export const signIn = (t: TestApp, user: Pick<CreatedUser, 'username' | 'password'>, totp_code?: string) =>
  t.request({
    method: 'POST',
    url: '/api/v1/tokens',
    payload: { username: user.username, password: user.password, ...(totp_code !== undefined ? { totp_code } : {}) },
  });
