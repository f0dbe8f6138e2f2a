import { createHash, randomBytes } from 'node:crypto';
import { Secret, TOTP } from 'otpauth';

/**
 * RFC 6238 with what every authenticator app reads from an otpauth:// URL: SHA-1, six digits, 30-second steps.
 * A code is accepted one step either side of now (RFC 6238 §5.2: a clock a little off, a code typed as it
 * turned), and then never again: the step it was accepted at is remembered (two-factor.repository.ts).
 */
export const TOTP_PERIOD_MS = 30_000;
const DIGITS = 6;
const WINDOW = 1;
/** RFC 4226 §4 asks for 128 bits at least and recommends 160. */
export const SECRET_BYTES = 20;
export const RECOVERY_CODE_COUNT = 10;

export const newTotpSecret = (): Buffer => randomBytes(SECRET_BYTES);

const totpOf = (secret: Uint8Array, label = 'ferry', issuer = 'Ferry'): TOTP =>
  new TOTP({
    issuer,
    label,
    algorithm: 'SHA1',
    digits: DIGITS,
    period: TOTP_PERIOD_MS / 1000,
    secret: new Secret({ buffer: Uint8Array.from(secret).buffer }),
  });

/** What an authenticator app is given: the secret in base32, its otpauth:// URL and that URL as an SVG QR code. */
export async function enrolment(
  secret: Uint8Array,
  label: string,
  issuer: string,
): Promise<{ secret: string; otpauth_url: string; qr_svg: string }> {
  const totp = totpOf(secret, label, issuer);
  const url = totp.toString();
  const { default: QRCode } = await import('qrcode'); // loaded by the first enrolment, not by every start
  const svg = await QRCode.toString(url, { type: 'svg', errorCorrectionLevel: 'M', margin: 4 });
  return { secret: totp.secret.base32, otpauth_url: url, qr_svg: svg };
}

/** The time step whose code `code` is at `now` (within the window), or null. */
export function stepOfCode(secret: Uint8Array, code: string, now: number): number | null {
  if (!/^[0-9]{6}$/.test(code)) return null;
  const delta = totpOf(secret).validate({ token: code, timestamp: now, window: WINDOW });
  return delta === null ? null : Math.floor(now / TOTP_PERIOD_MS) + delta;
}

/** The current code (tests, and nothing else in the app: codes come from the user's device). */
export const codeAt = (secret: Uint8Array, now: number): string => totpOf(secret).generate({ timestamp: now });

/** RFC 4648's base32 alphabet in lower case: 5 bits a character, no modulo bias (a byte's low 5 bits). */
const BASE32 = 'abcdefghijklmnopqrstuvwxyz234567';

/**
 * Recovery codes: 16 base32 characters (80 bits), shown as four groups of four. Typed back in any case, with or
 * without the dashes.
 */
export function newRecoveryCodes(): string[] {
  return Array.from({ length: RECOVERY_CODE_COUNT }, () => {
    const raw = [...randomBytes(16)].map((b) => BASE32[b & 31]).join('');
    return raw.match(/.{4}/g)!.join('-');
  });
}

/** A recovery code as stored: SHA-256 of its normal form (lower case, no dashes or spaces). */
export const recoveryCodeHash = (code: string): string =>
  createHash('sha256').update(code.toLowerCase().replace(/[\s-]/g, '')).digest('hex');

export const looksLikeRecoveryCode = (code: string): boolean =>
  /^[a-z2-7]{16}$/.test(code.toLowerCase().replace(/[\s-]/g, ''));
