import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';

/**
 * TOTP secrets at rest (SPEC §23): AES-256-GCM under a key derived by HKDF-SHA256 from the instance's token key
 * (JWT_SECRET, or DATA_DIR/jwt-secret, which `ferry backup` carries), never the token key itself. The user's id is
 * the additional data, so a sealed secret copied onto another account does not open. A database dump alone does
 * not give the secrets away; a restore with the same token key opens them again.
 */
export interface SecretBox {
  seal(secret: Uint8Array, userId: number): string;
  /** the secret, or null when it does not open (another key, another user, tampered) */
  open(sealed: string, userId: number): Buffer | null;
}

const VERSION = 'v1';
const NONCE_BYTES = 12;
const TAG_BYTES = 16;

export function createSecretBox(instanceSecret: Uint8Array): SecretBox {
  const key = Buffer.from(hkdfSync('sha256', instanceSecret, 'ferry', 'ferry totp secret v1', 32));
  const aad = (userId: number) => Buffer.from(`user:${userId}`);
  return {
    seal(secret, userId) {
      const nonce = randomBytes(NONCE_BYTES);
      const cipher = createCipheriv('aes-256-gcm', key, nonce).setAAD(aad(userId));
      const body = Buffer.concat([cipher.update(secret), cipher.final()]);
      return `${VERSION}.${Buffer.concat([nonce, cipher.getAuthTag(), body]).toString('base64url')}`;
    },
    open(sealed, userId) {
      const [version, data] = sealed.split('.');
      if (version !== VERSION || !data) return null;
      const raw = Buffer.from(data, 'base64url');
      if (raw.length <= NONCE_BYTES + TAG_BYTES) return null;
      try {
        const decipher = createDecipheriv('aes-256-gcm', key, raw.subarray(0, NONCE_BYTES)).setAAD(aad(userId));
        decipher.setAuthTag(raw.subarray(NONCE_BYTES, NONCE_BYTES + TAG_BYTES));
        return Buffer.concat([decipher.update(raw.subarray(NONCE_BYTES + TAG_BYTES)), decipher.final()]);
      } catch {
        return null;
      }
    },
  };
}
