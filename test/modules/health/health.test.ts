import { describe, expect, it } from 'vitest';
import { createMetrics, type ClickQueueStats } from '../../../src/infra/metrics.js';
import { NotReadyError } from '../../../src/lib/readiness-check.js';
import { createTestApp, engines, TestClock } from '../../helpers/app.js';
import { useTestApp } from '../../helpers/fixtures.js';

/** The value of one sample line of the Prometheus text, or undefined. */
function sample(text: string, name: string, labels = ''): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${name}${labels ? `{${labels}}` : ''} `));
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
}

describe.each(engines)('health, readiness and metrics on %s', (engine) => {
  const t = useTestApp(engine);

  it('when the process is up, then GET /healthz is 200 {status: ok}, never cached, and HEAD answers too', async () => {
    const res = await t.request({ url: '/healthz' });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'ok' });
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.headers['x-request-id']).toBeTruthy();
    expect((await t.request({ method: 'HEAD', url: '/healthz' })).status).toBe(200);
  });

  it('when the database answers and is migrated, then GET /readyz is 200 with each check', async () => {
    const res = await t.request({ url: '/readyz' });
    expect(res.status).toBe(200);
    // The scale-out run (PostgreSQL with TEST_REDIS_URL) checks Redis too, and shows the click stream (SPEC §12).
    const scaleOut = engine === 'postgres' && Boolean(process.env.TEST_REDIS_URL);
    const redis = scaleOut ? { redis: 'ok' } : {};
    const stream = scaleOut ? { click_stream: { backlog: expect.any(Number), consumers: expect.any(Number) } } : {};
    expect(res.body).toEqual({ status: 'ok', checks: { database: 'ok', storage: 'ok', ...redis }, ...stream });
  });

  it('when requests were answered, then /metrics counts them by route template and status, not by raw URL', async () => {
    await t.request({ url: '/api/v1/users/12345' });
    await t.request({ url: '/api/v1/users/12345' });
    await t.request({ url: '/no/such/path' });
    const res = await t.request({ url: '/metrics' });
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(sample(res.text, 'http_requests_total', 'method="GET",route="/api/v1/users/:id",status_code="401"')).toBe(2);
    expect(
      sample(
        res.text,
        'http_request_duration_seconds_count',
        'method="GET",route="/api/v1/users/:id",status_code="401"',
      ),
    ).toBe(2);
    expect(sample(res.text, 'http_requests_total', 'method="GET",route="unmatched",status_code="404"')).toBe(1);
    // In no label (a sample's value may contain the digits: 0.012345343 seconds once failed this line).
    expect(res.text).not.toMatch(/\{[^}]*12345[^}]*\}/);
    expect(res.text).toMatch(/^# TYPE ferry_redirect_duration_seconds histogram$/m);
    expect(sample(res.text, 'ferry_click_queue_depth')).toBe(0);
    expect(sample(res.text, 'ferry_clicks_dropped_total')).toBe(0);
    expect(res.text).toMatch(/^nodejs_heap_size_used_bytes \d+/m);
  });

  it('when metrics are scraped, then database pool use is reported', async () => {
    await t.request({ url: '/readyz' });
    const text = (await t.request({ url: '/metrics' })).text;
    const total = sample(text, 'ferry_db_pool_connections', 'state="total"')!;
    const max = sample(text, 'ferry_db_pool_connections', 'state="max"')!;
    expect(sample(text, 'ferry_db_pool_connections', 'state="waiting"')).toBe(0);
    if (engine === 'sqlite') {
      expect([total, max]).toEqual([1, 1]);
    } else {
      expect(max).toBe(t.config.dbPoolMax);
      expect(total).toBeGreaterThanOrEqual(1);
      expect(total).toBeLessThanOrEqual(max);
    }
  });
});

describe.each(engines)('readiness failures on %s', (engine) => {
  it('when a migration of this build is not applied, then GET /readyz is 503 naming it', async () => {
    const t = await createTestApp(engine);
    try {
      await t.storage.db
        .deleteFrom('kysely_migration' as never)
        .where('name' as never, '=', '002-tokens' as never)
        .execute();
      const res = await t.request({ url: '/readyz' });
      expect(res.status).toBe(503);
      expect(res.body.error).toMatchObject({
        code: 'SERVICE_UNAVAILABLE',
        details: [{ field: 'database', message: 'migrations not applied: 002-tokens' }],
      });
      expect(res.headers['retry-after']).toBe('5');
      expect((await t.request({ url: '/healthz' })).status).toBe(200); // alive, just not ready
    } finally {
      await t.close();
    }
  });

  it('when the database is closed, then GET /readyz is 503 without leaking the driver error, and /healthz stays 200', async () => {
    const t = await createTestApp(engine);
    try {
      await t.storage.close();
      const res = await t.request({ url: '/readyz' });
      expect(res.status).toBe(503);
      expect(res.body.error.details).toEqual([{ field: 'database', message: 'the database is unreachable' }]);
      expect(res.text).not.toMatch(/destroy|pool|sqlite|stack/i);
      expect((await t.request({ url: '/healthz' })).status).toBe(200);
    } finally {
      await t.close();
    }
  });

  it('when another readiness check fails (the Redis seam), then 503 names that check only', async () => {
    const t = await createTestApp(engine, {
      deps: {
        readinessChecks: {
          redis: async () => {
            throw new NotReadyError('redis is unreachable');
          },
        },
      },
    });
    try {
      const res = await t.request({ url: '/readyz' });
      expect(res.status).toBe(503);
      expect(res.body.error.details).toEqual([{ field: 'redis', message: 'redis is unreachable' }]);
    } finally {
      await t.close();
    }
  });
});

describe('click queue metrics seam', () => {
  it('when a click queue provider is set, then depth, flush lag, drops and a journal replay are reported from it at scrape time', async () => {
    const clock = new TestClock(1_000_000);
    const metrics = createMetrics({
      storage: { connections: () => ({ total: 1, idle: 1, waiting: 0, max: 1 }) },
      clock,
    });
    const t = await createTestApp('sqlite', { clock, deps: { metrics } });
    try {
      let stats: ClickQueueStats = { depth: 0, dropped: 0, lastFlushAt: null };
      metrics.setClickQueueProvider(() => stats);
      const empty = (await t.request({ url: '/metrics' })).text;
      expect(sample(empty, 'ferry_click_flush_lag_seconds')).toBe(0);
      expect(sample(empty, 'ferry_click_journal_replaying')).toBe(0);

      stats = { depth: 42, dropped: 7, lastFlushAt: clock.now(), journalReplaying: true };
      clock.advance(2500);
      const text = (await t.request({ url: '/metrics' })).text;
      expect(sample(text, 'ferry_click_queue_depth')).toBe(42);
      expect(sample(text, 'ferry_clicks_dropped_total')).toBe(7);
      expect(sample(text, 'ferry_click_flush_lag_seconds')).toBe(2.5);
      expect(sample(text, 'ferry_click_journal_replaying')).toBe(1);
    } finally {
      await t.close();
    }
  });
});
