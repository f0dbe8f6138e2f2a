import { createHmac, createSign, generateKeyPairSync } from 'node:crypto';

const b64 = (value: unknown): string =>
  Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)).toString('base64url');

export interface DecodedJwt {
  header: Record<string, unknown>;
  payload: Record<string, unknown>;
  signature: string;
}

/** Splits a compact JWT without verifying it. */
export function decodeJwt(token: string): DecodedJwt {
  const [h, p, s] = token.split('.') as [string, string, string];
  return {
    header: JSON.parse(Buffer.from(h, 'base64url').toString()) as Record<string, unknown>,
    payload: JSON.parse(Buffer.from(p, 'base64url').toString()) as Record<string, unknown>,
    signature: s,
  };
}

/** A compact JWT with any header, signed with HMAC (`hs`: 256/384/512), unsigned (`none`), or RS256. */
export function forgeJwt(
  header: Record<string, unknown>,
  payload: Record<string, unknown>,
  sign: { hs?: 256 | 384 | 512; secret: string } | 'none' | 'rs256',
): string {
  const input = `${b64(header)}.${b64(payload)}`;
  if (sign === 'none') return `${input}.`;
  if (sign === 'rs256') {
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    return `${input}.${createSign('RSA-SHA256').update(input).sign(privateKey).toString('base64url')}`;
  }
  const mac = createHmac(`sha${sign.hs ?? 256}`, sign.secret)
    .update(input)
    .digest('base64url');
  return `${input}.${mac}`;
}

/** The token with its payload replaced but the original header and signature kept. */
export function withPayload(token: string, payload: Record<string, unknown>): string {
  const [h, , s] = token.split('.');
  return `${h}.${b64(payload)}.${s}`;
}

/** The token with its header replaced but the original payload and signature kept. */
export function withHeader(token: string, header: Record<string, unknown>): string {
  const [, p, s] = token.split('.');
  return `${b64(header)}.${p}.${s}`;
}
