import { describe, expect, it } from 'vitest';
import { createTestApp, engines, type TestApp } from '../../helpers/app.js';
import { createLink, createUser, recordCount, visit } from '../../helpers/factories.js';

/** N visits from 50 addresses (through the trusted proxy) interleaved with HEADs, sent concurrently. */
async function visitMany(t: TestApp, code: string, visits: number, heads: number): Promise<void> {
  const requests = [];
  for (let i = 0; i < Math.max(visits, heads); i += 1) {
    if (i < visits) requests.push(visit(t, code, { 'x-forwarded-for': `198.51.100.${i % 50}` }));
    if (i < heads) requests.push(t.request({ method: 'HEAD', url: `/${code}` }));
  }
  const responses = await Promise.all(requests);
  expect(responses.every((r) => r.status === 302)).toBe(true);
}

describe.each(engines)('exact click counting on %s', (engine) => {
  // Small batches and a short interval, so that timer flushes, size flushes and visits overlap.
  const env = { CLICK_BATCH_SIZE: '7', CLICK_FLUSH_MS: '10', TRUST_PROXY: 'true' };

  it('when N visits are mixed with HEADs and the queue is flushed, then exactly N records, N in click_count and N in the stats', async () => {
    const t = await createTestApp(engine, { env });
    try {
      const link = await createLink(t, { original_url: 'https://example.com/n' });
      await visitMany(t, link.short_code, 300, 120);
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
      const link = await createLink(t, { original_url: 'https://example.com/c' });
      await visitMany(t, link.short_code, 250, 100);
      expect(t.app.clickQueue.status().depth).toBe(250); // nothing written yet: only the close can save them
      await t.app.close();
      expect(await recordCount(t, link.id)).toBe(250);
      reopened = await createTestApp(engine, {
        dataDir: t.config.dataDir,
        ...(t.config.databaseUrl ? { databaseUrl: t.config.databaseUrl } : {}),
      });
      const stats = await reopened.request({ url: `/api/v1/links/${link.short_code}/stats` });
      expect(stats.body).toMatchObject({ total_clicks: 250, click_count: 250 });
    } finally {
      await reopened?.close();
      await t.close();
    }
  });

  it('when the queue is full, then the overflow is dropped and counted, and what was accepted is recorded exactly', async () => {
    const t = await createTestApp(engine, {
      env: { ...env, CLICK_FLUSH_MS: '60000', CLICK_BATCH_SIZE: '100000', CLICK_QUEUE_LIMIT: '100' },
    });
    try {
      const link = await createLink(t, { original_url: 'https://example.com/o' });
      await visitMany(t, link.short_code, 130, 0);
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
      const doomed = await createLink(t, { original_url: 'https://example.com/d' });
      const kept = await createLink(t, { original_url: 'https://example.com/k' });
      await visitMany(t, doomed.short_code, 5, 0);
      await visitMany(t, kept.short_code, 3, 0);
      expect(
        (await t.request({ method: 'DELETE', url: `/api/v1/links/${doomed.short_code}`, token: admin.token })).status,
      ).toBe(204);
      await t.app.clickQueue.flush();
      expect(t.app.clickQueue.status().depth).toBe(0);
      expect(await recordCount(t, doomed.id)).toBe(0);
      expect(await recordCount(t, kept.id)).toBe(3);
    } finally {
      await t.close();
    }
  });
});
