import { describe, expect, it } from 'vitest';
import { createTestApp, engines, type TestApp } from '../../helpers/app.js';
import { createUser } from '../../helpers/factories.js';

/** N visits interleaved with HEADs, sent concurrently. */
async function visit(t: TestApp, code: string, visits: number, heads: number): Promise<void> {
  const requests = [];
  for (let i = 0; i < Math.max(visits, heads); i += 1) {
    if (i < visits) requests.push(t.app.inject({ url: `/${code}`, headers: { 'x-forwarded-for': `198.51.100.${i % 50}`, 'user-agent': 'Mozilla/5.0 (X11; Linux x86_64; rv:132.0) Gecko/20100101 Firefox/132.0' } }));
    if (i < heads) requests.push(t.app.inject({ method: 'HEAD', url: `/${code}` }));
  }
  const responses = await Promise.all(requests);
  expect(responses.every((r) => r.statusCode === 302)).toBe(true);
}

const recordCount = async (t: TestApp, linkId: number): Promise<number> =>
  Number((await t.storage.db.selectFrom('clicks').select((eb) => eb.fn.countAll<number>().as('n')).where('link_id', '=', linkId).executeTakeFirstOrThrow()).n);

describe.each(engines)('exact click counting on %s', (engine) => {
  // Small batches and a short interval, so that timer flushes, size flushes and visits overlap.
  const env = { CLICK_BATCH_SIZE: '7', CLICK_FLUSH_MS: '10', TRUST_PROXY: 'true' };

  it('when N visits are mixed with HEADs and the queue is flushed, then exactly N records, N in click_count and N in the stats', async () => {
    const t = await createTestApp(engine, { env });
    try {
      const link = (await t.request({ method: 'POST', url: '/api/v1/links', payload: { original_url: 'https://example.com/n' } })).body;
      await visit(t, link.short_code, 300, 120);
      await t.app.clickQueue.flush();
      expect(await recordCount(t, link.id)).toBe(300);
      const stats = await t.request({ url: `/api/v1/links/${link.short_code}/stats` });
      expect(stats.status).toBe(200);
      expect(stats.body).toMatchObject({ total_clicks: 300, click_count: 300, unique_visitors: 50 });
      expect(stats.body.timeseries.reduce((s: number, b: { clicks: number }) => s + b.clicks, 0)).toBe(300);
      expect((await t.request({ url: `/api/v1/links/${link.short_code}` })).body.click_count).toBe(300);
      expect(t.app.clickQueue.status().dropped).toBe(0);
    } finally {
      await t.close();
    }
  });

  it('when the app is closed right after the visits, then closing writes every click before the database closes', async () => {
    const t = await createTestApp(engine, { env: { ...env, CLICK_FLUSH_MS: '60000', CLICK_BATCH_SIZE: '100000' } });
    let reopened: TestApp | null = null;
    try {
      const link = (await t.request({ method: 'POST', url: '/api/v1/links', payload: { original_url: 'https://example.com/c' } })).body;
      await visit(t, link.short_code, 250, 100);
      expect(t.app.clickQueue.status().depth).toBe(250); // nothing written yet: only the close can save them
      await t.app.close();
      expect(await recordCount(t, link.id)).toBe(250);
      reopened = await createTestApp(engine, { dataDir: t.config.dataDir, ...(t.config.databaseUrl ? { databaseUrl: t.config.databaseUrl } : {}) });
      const stats = await reopened.request({ url: `/api/v1/links/${link.short_code}/stats` });
      expect(stats.body).toMatchObject({ total_clicks: 250, click_count: 250 });
    } finally {
      await reopened?.close();
      await t.close();
    }
  });

  it('when the queue is full, then the overflow is dropped and counted, and what was accepted is recorded exactly', async () => {
    const t = await createTestApp(engine, { env: { ...env, CLICK_FLUSH_MS: '60000', CLICK_BATCH_SIZE: '100000', CLICK_QUEUE_LIMIT: '100' } });
    try {
      const link = (await t.request({ method: 'POST', url: '/api/v1/links', payload: { original_url: 'https://example.com/o' } })).body;
      await visit(t, link.short_code, 130, 0);
      expect(t.app.clickQueue.status().depth).toBe(100);
      expect(t.app.clickQueue.status().dropped).toBe(30);
      await t.app.clickQueue.flush();
      expect(await recordCount(t, link.id)).toBe(100);
    } finally {
      await t.close();
    }
  });

  it('when a link is deleted while its clicks wait in the queue, then the flush drops them without failing', async () => {
    const t = await createTestApp(engine, { env: { ...env, CLICK_FLUSH_MS: '60000', CLICK_BATCH_SIZE: '100000' } });
    try {
      const admin = await createUser(t, { role: 'admin', status: 'active' });
      const doomed = (await t.request({ method: 'POST', url: '/api/v1/links', payload: { original_url: 'https://example.com/d' } })).body;
      const kept = (await t.request({ method: 'POST', url: '/api/v1/links', payload: { original_url: 'https://example.com/k' } })).body;
      await visit(t, doomed.short_code, 5, 0);
      await visit(t, kept.short_code, 3, 0);
      expect((await t.request({ method: 'DELETE', url: `/api/v1/links/${doomed.short_code}`, token: admin.token })).status).toBe(204);
      await t.app.clickQueue.flush();
      expect(t.app.clickQueue.status().depth).toBe(0);
      expect(await recordCount(t, doomed.id)).toBe(0);
      expect(await recordCount(t, kept.id)).toBe(3);
    } finally {
      await t.close();
    }
  });
});
