import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createTestApp } from '../helpers/app.js';
import { runFerry } from '../helpers/cli.js';
import { expectEnvelope } from '../helpers/expect-envelope.js';
import { createUser } from '../helpers/factories.js';
import { codeAt, enableTotp, signIn, STEP_MS } from '../modules/two-factor/two-factor.helpers.js';

/**
 * SPEC §23 with §18's backup: the TOTP secrets are sealed under a key derived from the token key, which `ferry
 * backup` carries (DATA_DIR/jwt-secret), so a restored instance checks the same codes; both steps are audited.
 * The embedded database only (with PostgreSQL, pg_dump and JWT_SECRET do it).
 */
describe('two-factor sign-in across ferry backup and restore', { timeout: 180_000 }, () => {
  it('when an instance with the generated token key is backed up and restored, then its users sign in with their codes', async () => {
    const work = mkdtempSync(path.join(tmpdir(), 'ferry-2fa-backup-'));
    const [from, to, file] = [path.join(work, 'from'), path.join(work, 'to'), path.join(work, 'ferry.tar.gz')];
    const env = { JWT_SECRET: '' }; // unset: the key is generated into DATA_DIR/jwt-secret
    const source = await createTestApp('sqlite', { dataDir: from, env });
    try {
      const u = await createUser(source);
      const { secret, recoveryCodes } = await enableTotp(source, u);
      const backup = await runFerry(['backup', file], { DATA_DIR: from });
      expect(backup.status, backup.stderr).toBe(0);
      const created = await source.storage.db
        .selectFrom('audit_log')
        .selectAll()
        .where('action', '=', 'backup.created')
        .executeTakeFirstOrThrow();
      expect(created).toMatchObject({ actor: 'cli', actor_id: null, target_type: 'backup', target_id: 'ferry.tar.gz' });

      const restore = await runFerry(['restore', file], { DATA_DIR: to });
      expect(restore.status, restore.stderr).toBe(0);
      const restored = await createTestApp('sqlite', { dataDir: to, env, clock: source.clock });
      try {
        source.clock.advance(STEP_MS);
        expectEnvelope(await signIn(restored, u), 401, 'TOTP_REQUIRED');
        expect((await signIn(restored, u, codeAt(secret, restored.clock.now()))).status).toBe(201);
        expect((await signIn(restored, u, recoveryCodes[0]!)).status).toBe(201);
        const entry = await restored.storage.db
          .selectFrom('audit_log')
          .selectAll()
          .where('action', '=', 'backup.restored')
          .executeTakeFirstOrThrow();
        expect(entry).toMatchObject({ actor: 'cli', target_id: 'ferry.tar.gz' });
      } finally {
        await restored.close();
      }
    } finally {
      await source.close();
      rmSync(work, { recursive: true, force: true });
    }
  });
});
