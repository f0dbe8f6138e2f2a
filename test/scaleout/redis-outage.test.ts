import { PassThrough } from 'node:stream';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clickStreamKeys } from '../../src/modules/clicks/transport/click-stream.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { type CreatedUser, createLink, createUser } from '../helpers/factories.js';
import { recordCount, scaleOut, startPrivateRedis, waitFor } from '../helpers/scale-out.js';
import { missing, unless } from '../helpers/skip.js';

/**
 * Losing Redis (docs/deployment.md, "When Redis is lost"): a private redis-server on a free loopback port,
 * killed with SIGKILL and started again (empty: no persistence) while an app uses it.
 */
describe.runIf(scaleOut)(unless(missing.scaleOut, 'when Redis is lost and comes back'), () => {
  let redis: Awaited<ReturnType<typeof startPrivateRedis>>;
  let t: TestApp;
  let user: CreatedUser;
  let link: { id: number; short_code: string };
  let publicLink: { short_code: string };
  const logLines: Array<{ level: number; msg: string }> = [];
  const logged = (msg: string): number => logLines.filter((l) => l.msg === msg).length;
  beforeAll(async () => {
    redis = await startPrivateRedis();
    const logStream = new PassThrough();
    logStream.on('data', (chunk: Buffer) => {
      for (const line of chunk.toString('utf8').split('\n').filter(Boolean))
        logLines.push(JSON.parse(line) as { level: number; msg: string });
    });
    t = await createTestApp('postgres', { redisUrl: redis.url, env: { CLICK_FLUSH_MS: '50' }, logStream });
    user = await createUser(t, { status: 'active' });
    link = (
      await t.request({
        method: 'POST',
        url: '/api/v1/links',
        token: user.token,
        payload: { original_url: 'https://example.com/outage' },
      })
    ).body;
    publicLink = await createLink(t, { original_url: 'https://example.com/anyone' });
  });
  afterAll(async () => {
    await t.close();
    await redis.kill();
  });

  /**
   * Nothing waits for the lost Redis: a command to it would fail only after its 1 s command timeout
   * (src/infra/redis.ts), so an answer within that shows it was not waited for, however busy the machine.
   */
  const NO_WAIT_MS = 1_000;

  /** Visits, each answered within `ms`. */
  async function visits(n: number, ms: number): Promise<void> {
    for (let i = 0; i < n; i += 1) {
      const started = performance.now();
      const res = await t.app.inject({ url: `/${link.short_code}` });
      expect(res.statusCode).toBe(302);
      expect(performance.now() - started).toBeLessThan(ms);
    }
  }

  it('then redirects keep answering and counting, rate limits fail open, tokens fail closed, readiness says why, and all of it recovers by itself', async () => {
    await visits(10, NO_WAIT_MS);
    await t.app.clickQueue.flush();
    expect(await recordCount(t, link.id)).toBe(10);
    expect((await t.request({ url: '/readyz' })).body.checks).toEqual({ database: 'ok', storage: 'ok', redis: 'ok' });
    // SPEC §12: without CLICK_WORKER_IN_PROCESS this instance consumes the stream itself; /readyz says so.
    await waitFor(
      'readiness to show this instance as a live consumer',
      async () => (await t.request({ url: '/readyz' })).body.click_stream?.consumers === 1,
    );
    expect((await t.request({ url: '/readyz' })).body.click_stream.backlog).toBe(0);
    const before = (await t.request({ url: '/metrics' })).text;
    expect(before).toMatch(/^ferry_clicks_fallback_total 0$/m);
    expect(before).toMatch(/^ferry_click_stream_consumers 1$/m);

    await redis.kill();

    // Redirects: answered at once; their clicks go to the in-process fallback and are written directly.
    await visits(20, NO_WAIT_MS);
    await waitFor('the fallback to write the clicks', async () => (await recordCount(t, link.id)) === 30);
    expect((await t.request({ url: '/metrics' })).text).toMatch(/^ferry_clicks_fallback_total 20$/m);
    // Rate limits fail open: anonymous API requests are served, without waiting for Redis.
    const started = performance.now();
    const anonymous = await t.request({ url: `/api/v1/links/${publicLink.short_code}` });
    expect(anonymous.status).toBe(200);
    expect(performance.now() - started).toBeLessThan(NO_WAIT_MS);
    // Tokens fail closed: a revocation cannot be ruled out, so a token is not accepted; 503, not 401.
    const authed = await t.request({ url: '/api/v1/users/me', token: user.token });
    expect(authed.status).toBe(503);
    expect(authed.body.error.code).toBe('SERVICE_UNAVAILABLE');
    expect(authed.headers['retry-after']).toBe('5');
    // Readiness names the failing dependency; liveness is unaffected.
    const ready = await t.request({ url: '/readyz' });
    expect(ready.status).toBe(503);
    expect(ready.body.error.details).toEqual([{ field: 'redis', message: 'redis is unreachable' }]);
    expect((await t.request({ url: '/healthz' })).status).toBe(200);

    await redis.start();

    await waitFor('readiness to recover', async () => (await t.request({ url: '/readyz' })).status === 200, 15_000);
    await waitFor(
      'tokens to be accepted again',
      async () => (await t.request({ url: '/api/v1/users/me', token: user.token })).status === 200,
      5_000,
    );
    // The stream is back (the restarted server is empty: the consumer group is created again).
    await visits(15, NO_WAIT_MS);
    await t.app.clickQueue.flush();
    expect(await recordCount(t, link.id)).toBe(45);
    // One warning when the outage began and one line when it ended, not a line per click or per request;
    // the 503s of the outage (tokens) are not logged as failed requests.
    expect(logged('click stream unavailable: clicks go to the in-process fallback queue until it is back')).toBe(1);
    expect(logged("click stream available again: the outage's clicks were written by the fallback queue")).toBe(1);
    expect(logLines.filter((l) => l.msg === 'request failed')).toEqual([]);
    const stats = await t.request({ url: `/api/v1/links/${link.short_code}/stats`, token: user.token });
    expect(stats.body).toMatchObject({ total_clicks: 45, click_count: 45 });
    expect(t.app.clickQueue.status().dropped).toBe(0);
    // Every record carries its key, whichever path it took; the last 15 went through the new stream.
    const keyed = await t.storage.db
      .selectFrom('clicks')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('link_id', '=', link.id)
      .where('click_key', 'is not', null)
      .executeTakeFirstOrThrow();
    expect(Number(keyed.n)).toBe(45);
    const direct = new Redis(redis.url);
    const groups = (await direct.xinfo('GROUPS', clickStreamKeys(t.redisPrefix).stream)) as unknown[][];
    expect(groups[0]).toContain('click-writers');
    expect(Number(groups[0]![groups[0]!.indexOf('entries-read') + 1])).toBe(15);
    await direct.quit();
  });
});
