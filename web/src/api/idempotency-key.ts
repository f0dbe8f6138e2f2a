/**
 * A fresh Idempotency-Key: 128 random bits as hex. crypto.getRandomValues works on plain http too, where
 * crypto.randomUUID (secure contexts only) does not exist.
 */
export function newIdempotencyKey(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
}
