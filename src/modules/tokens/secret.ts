import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { makePrivateDir, writePrivateFile } from '../../lib/private-files.js';

/**
 * The HS256 key: JWT_SECRET when configured (at least 32 bytes, checked by config), otherwise a 256-bit
 * random key generated on first start and kept in DATA_DIR/jwt-secret (mode 0600 whatever the umask) so that tokens survive a
 * restart. Several instances must share JWT_SECRET (docs/deployment.md).
 */
export function loadJwtSecret(configured: string | null, dataDir: string): Uint8Array {
  if (configured) return new TextEncoder().encode(configured);
  const file = path.join(dataDir, 'jwt-secret');
  try {
    const existing = readFileSync(file, 'utf8').trim();
    if (existing.length >= 43) return Buffer.from(existing, 'base64url');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  makePrivateDir(dataDir);
  const secret = randomBytes(32);
  try {
    // 'wx': if another process created it first, use theirs.
    writePrivateFile(file, secret.toString('base64url') + '\n', 'wx');
    return secret;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    return Buffer.from(readFileSync(file, 'utf8').trim(), 'base64url');
  }
}
