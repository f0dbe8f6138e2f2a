import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openServices, type CliServices } from '../../../src/cli/services.js';
import type { LinkModeration } from '../../../src/modules/links/index.js';
import { engines } from '../../helpers/app.js';
import { useTestApp } from '../../helpers/fixtures.js';
import { waitFor } from '../../helpers/scale-out.js';
import { createLink } from '../../helpers/factories.js';

/**
 * SPEC §18: `ferry links disable` runs in another process than the server, on the same database: its change must
 * reach the running server's redirect cache within a second (PostgreSQL: NOTIFY; SQLite, where the server
 * otherwise keeps a link in its cache for good: the outbox, read every 250 ms). The CLI's services are opened
 * here as the CLI opens them (cli/services.ts), on a storage of their own.
 */
describe.each(engines)('moderation from outside the server on %s', (engine) => {
  const t = useTestApp(engine, { redisUrl: '' });
  let cli: CliServices;
  let moderation: LinkModeration;
  let base: string;
  beforeAll(async () => {
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    cli = await openServices(t.config, (line) => {
      throw new Error(`the CLI warned: ${line}`);
    });
    moderation = cli.moderation;
  });
  afterAll(async () => cli.close());

  const visit = async (code: string) => (await fetch(`${base}/${code}`, { redirect: 'manual' })).status;

  it('when another process disables a link the server has cached, then the server answers 410 within a second (through its alias too), and redirects again within a second of its enabling', async () => {
    const alias = `cli-alias-${Math.random().toString(36).slice(2, 8)}`;
    const link = await createLink(t, { original_url: 'https://example.com/cli', aliases: [alias] });
    expect(await visit(link.short_code)).toBe(302);
    expect(await visit(link.short_code)).toBe(302); // served from the cache (the fast path) now
    expect(await visit(alias)).toBe(302);
    expect(await visit(alias)).toBe(302);
    const disabled = await moderation.disable(link.short_code, 'Reported', undefined, 'cli');
    expect(disabled.disabled_reason).toBe('Reported');
    const disabledAt = Date.now();
    await waitFor('the server to refuse the disabled link', async () => (await visit(link.short_code)) === 410, 1_000);
    expect(Date.now() - disabledAt).toBeLessThan(1_000);
    await waitFor(
      'the server to refuse the disabled link through its alias',
      async () => (await visit(alias)) === 410,
      1_000,
    );
    await moderation.enable(link.short_code);
    const enabledAt = Date.now();
    await waitFor('the server to redirect again', async () => (await visit(link.short_code)) === 302, 1_000);
    expect(Date.now() - enabledAt).toBeLessThan(1_000);
    await waitFor('the server to redirect the alias again', async () => (await visit(alias)) === 302, 1_000);
  });

  it("when the CLI lists links, then it gets the API's records, filtered as the admin list is", async () => {
    const link = await createLink(t, { original_url: 'https://example.com/listed', tags: ['cli-list'] });
    await moderation.disable(link.short_code, null, undefined, 'cli');
    const page = await moderation.listAll({ tag: 'cli-list', status: 'disabled' as const }, '/api/v1/links');
    expect(page.data).toEqual([
      expect.objectContaining({ short_code: link.short_code, disabled: true, disabled_reason: null }),
    ]);
    await expect(moderation.disable('nope1234', null, undefined, 'cli')).rejects.toMatchObject({ code: 'NOT_FOUND' });
  });
});
