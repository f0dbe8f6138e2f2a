import { createCipheriv, createDecipheriv, createHash, createHmac, randomBytes } from 'node:crypto';

/**
 * A hook's signing secret (SPEC §22, Standard Webhooks 1.0): `whsec_` and the base64 of 32 random bytes, shown
 * once. It must be usable to sign every delivery, so it cannot be kept as a hash: it is kept encrypted
 * (AES-256-GCM) under a key derived from the instance's JWT secret, so a copy of the database alone does not
 * give the secrets away.
 */
export const SECRET_PREFIX = 'whsec_';

export const newWebhookSecret = (): string => `${SECRET_PREFIX}${randomBytes(32).toString('base64')}`;

export interface SecretBox {
  seal(secret: string): string;
  open(sealed: string): string;
}

/** The sealing of secrets at rest, keyed from the instance's JWT secret (not equal to it). */
export function createSecretBox(instanceSecret: Uint8Array): SecretBox {
  const key = createHash('sha256').update('ferry-webhook-secrets:').update(instanceSecret).digest();
  // Every delivery opens its hook's secret: the opened ones are kept (a few hundred bytes a hook), a bound on them.
  const opened = new Map<string, string>();
  const box: SecretBox = {
    seal(secret) {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', key, iv);
      const data = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
      return `v1.${iv.toString('base64url')}.${data.toString('base64url')}.${cipher.getAuthTag().toString('base64url')}`;
    },
    open(sealed) {
      const [version, iv, data, tag] = sealed.split('.');
      if (version !== 'v1' || !iv || data === undefined || !tag) throw new Error('not a sealed webhook secret');
      const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
      decipher.setAuthTag(Buffer.from(tag, 'base64url'));
      return Buffer.concat([decipher.update(Buffer.from(data, 'base64url')), decipher.final()]).toString('utf8');
    },
  };
  return {
    seal: box.seal,
    open(sealed) {
      let secret = opened.get(sealed);
      if (secret === undefined) {
        secret = box.open(sealed);
        if (opened.size >= OPENED_SECRETS) opened.clear();
        opened.set(sealed, secret);
      }
      return secret;
    },
  };
}

const OPENED_SECRETS = 10_000;

/**
 * `webhook-signature`: `v1,<base64 HMAC-SHA256 of "<id>.<timestamp>.<body>">` under each secret (its base64 part,
 * decoded), space-separated: the current one first, then the previous one while it still signs.
 */
export function signatureHeader(
  secrets: readonly string[],
  id: string,
  timestampSeconds: number,
  body: string,
): string {
  const content = `${id}.${timestampSeconds}.${body}`;
  return secrets
    .map((secret) => {
      const key = Buffer.from(secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret, 'base64');
      return `v1,${createHmac('sha256', key).update(content).digest('base64')}`;
    })
    .join(' ');
}
