import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createTestApp, engines } from '../../helpers/app.js';
import { createUser } from '../../helpers/factories.js';

const HINT =
  /No admin account exists yet: create the first one on this machine with `npx ferry admin create <username>`/;

/** Collects the app's log lines (JSON) as they are written. */
function logLines(): { stream: PassThrough; messages: () => string[] } {
  const stream = new PassThrough();
  let text = '';
  stream.on('data', (chunk: Buffer) => (text += chunk.toString()));
  return {
    stream,
    messages: () =>
      text
        .split('\n')
        .filter(Boolean)
        .map((l) => (JSON.parse(l) as { msg: string }).msg),
  };
}

/** SPEC §18 first run: no admin and no ADMIN_USERNAME → one start-up line and GET /instance say how to make one. */
describe.each(engines)('first run on %s', (engine) => {
  it('when no admin exists and ADMIN_USERNAME is unset, then start-up logs one line naming the command, and GET /instance gives it', async () => {
    const log = logLines();
    const t = await createTestApp(engine, { logStream: log.stream });
    try {
      expect(log.messages().filter((m) => HINT.test(m))).toHaveLength(1);
      const info = await t.request({ url: '/api/v1/instance' });
      expect(info.status).toBe(200);
      expect(info.headers['cache-control']).toBe('private, no-cache');
      const command = 'npx ferry admin create <username>';
      // The default domain's app links (SPEC §21) are unset on a fresh instance.
      expect(info.body).toEqual({
        registration: 'approval',
        anonymous_links: true,
        first_admin_command: command,
        oidc_display_name: null,
        apple_app_site_association: null,
        android_asset_links: null,
      });
      expect((await t.request({ url: '/api/v2/instance' })).body).toEqual({
        registration: 'approval',
        anonymousLinks: true,
        firstAdminCommand: command,
        oidcDisplayName: null,
        appleAppSiteAssociation: null,
        androidAssetLinks: null,
      });
      // Once an admin exists (made by the CLI, here through the repository), the hint is gone.
      await createUser(t, { role: 'admin' });
      expect((await t.request({ url: '/api/v1/instance' })).body.first_admin_command).toBeNull();
    } finally {
      await t.close();
    }
  });

  it('when CLI_COMMAND names the tool as the container image does, then the hint is the command that runs there', async () => {
    const log = logLines();
    const t = await createTestApp(engine, { logStream: log.stream, env: { CLI_COMMAND: 'ferry' } });
    try {
      const lines = log.messages().filter((m) => m.startsWith('No admin account exists yet'));
      expect(lines).toEqual([
        'No admin account exists yet: create the first one on this machine with `ferry admin create <username>` (or set ADMIN_USERNAME and ADMIN_PASSWORD)',
      ]);
      expect((await t.request({ url: '/api/v1/instance' })).body.first_admin_command).toBe(
        'ferry admin create <username>',
      );
    } finally {
      await t.close();
    }
  });

  it('when ADMIN_USERNAME is set, then no hint is logged or given', async () => {
    const log = logLines();
    const t = await createTestApp(engine, {
      logStream: log.stream,
      env: { ADMIN_USERNAME: 'root', ADMIN_PASSWORD: 'root-password-1' },
    });
    try {
      expect(log.messages().filter((m) => HINT.test(m))).toHaveLength(0);
      expect((await t.request({ url: '/api/v1/instance' })).body.first_admin_command).toBeNull();
    } finally {
      await t.close();
    }
  });
});
