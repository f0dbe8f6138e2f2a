import { beforeAll, describe, expect, it } from 'vitest';
import { engines, type ApiResponse, type TestApp } from '../helpers/app.js';
import { useTestApp } from '../helpers/fixtures.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls until `accept` holds (sampling is periodic), failing after `ms`. */
async function eventually(
  t: TestApp,
  url: string,
  accept: (r: ApiResponse) => boolean,
  ms = 3000,
): Promise<ApiResponse> {
  const deadline = Date.now() + ms;
  for (;;) {
    const res = await t.request({ url });
    if (accept(res) || Date.now() > deadline) return res;
    // Not much faster: on a loaded machine polling every few ms kept the loop past a 0.5 utilisation bound by itself.
    await sleep(50);
  }
}

function expect503(res: ApiResponse, retryAfter: string): void {
  expect(res.status).toBe(503);
  expect(res.body.error).toMatchObject({ code: 'SERVICE_UNAVAILABLE', details: [] });
  expect(res.headers['retry-after']).toBe(retryAfter);
  expect(res.headers['cache-control']).toBe('no-store');
  expect(res.headers['x-request-id']).toBe(res.body.requestId);
}

describe.each(engines)('overload on %s', (engine) => {
  describe('when the heap is past its bound', () => {
    // A 1 MiB heap bound is always exceeded: the real sampler, with a bound no process can meet. (The delay
    // bound is off so that the heap is the one reason.)
    const t = useTestApp(engine, {
      env: {
        OVERLOAD_MAX_HEAP_BYTES: String(1024 * 1024),
        OVERLOAD_MAX_EVENT_LOOP_DELAY_MS: '0',
        OVERLOAD_SAMPLE_INTERVAL_MS: '100',
      },
    });

    it('then the API and the docs answer 503 SERVICE_UNAVAILABLE with Retry-After before doing any work', async () => {
      const res = await eventually(t, '/api/v1/users/1', (r) => r.status === 503);
      expect503(res, '5');
      expect(res.headers).not.toHaveProperty('ratelimit'); // shed before the limiter counted it
      expect503(
        await t.request({ method: 'POST', url: '/api/v1/tokens', payload: { username: 'a', password: 'b' } }),
        '5',
      );
      expect((await t.app.inject({ url: '/v3/api-docs' })).statusCode).toBe(503);
    });

    it('then health, readiness and metrics still answer, and the shed requests are counted', async () => {
      await eventually(t, '/api/v1/users/1', (r) => r.status === 503);
      expect((await t.request({ url: '/healthz' })).status).toBe(200);
      expect((await t.request({ url: '/readyz' })).status).toBe(200);
      const metrics = await t.request({ url: '/metrics' });
      expect(metrics.status).toBe(200);
      expect(metrics.text).toMatch(/^ferry_overload_shed_total\{reason="heapUsedBytes"\} [1-9]\d*$/m);
    });
  });

  /** CPU-bound work in 40 ms slices for `ms`: timers run late all along (a single long block is not sampled). */
  async function busy(ms: number): Promise<void> {
    const end = Date.now() + ms;
    while (Date.now() < end) {
      const slice = Date.now() + 40;
      while (Date.now() < slice) {
        // the event loop cannot turn
      }
      await sleep(0);
    }
  }

  describe('when the event loop is delayed', () => {
    const t = useTestApp(engine, {
      env: { OVERLOAD_MAX_EVENT_LOOP_DELAY_MS: '15', OVERLOAD_SAMPLE_INTERVAL_MS: '100' },
    });
    beforeAll(async () => {
      await sleep(300); // armed after two samples
    });

    it('then requests are shed while the delay lasts and served again once it is gone', async () => {
      // Precondition: served (the set-up of the test itself may have kept the loop busy for a sample or two).
      expect((await eventually(t, '/api/v1/users/1', (r) => r.status !== 503, 10_000)).status).toBe(401);
      await busy(600);
      expect503(await eventually(t, '/api/v1/users/1', (r) => r.status === 503, 1000), '5');
      expect((await eventually(t, '/api/v1/users/1', (r) => r.status !== 503, 10_000)).status).toBe(401);
      expect((await t.request({ url: '/metrics' })).text).toMatch(
        /^ferry_overload_shed_total\{reason="eventLoopDelay"\} [1-9]/m,
      );
    });
  });

  describe('when the event loop is saturated', () => {
    const t = useTestApp(engine, {
      env: { OVERLOAD_MAX_ELU: '0.5', OVERLOAD_MAX_EVENT_LOOP_DELAY_MS: '0', OVERLOAD_SAMPLE_INTERVAL_MS: '100' },
    });
    beforeAll(async () => {
      await sleep(300);
    });

    it('then requests are shed while utilisation is past the bound and served again after', async () => {
      // Precondition: served (the set-up of the test itself may have kept the loop busy for a sample or two).
      expect((await eventually(t, '/api/v1/users/1', (r) => r.status !== 503, 10_000)).status).toBe(401);
      await busy(600);
      expect503(await eventually(t, '/api/v1/users/1', (r) => r.status === 503, 1000), '5');
      expect((await eventually(t, '/api/v1/users/1', (r) => r.status !== 503, 10_000)).status).toBe(401);
      expect((await t.request({ url: '/metrics' })).text).toMatch(
        /^ferry_overload_shed_total\{reason="eventLoopUtilization"\} [1-9]/m,
      );
    });
  });

  describe('with the default bounds', () => {
    const t = useTestApp(engine);

    it('when the process is healthy, then nothing is shed', async () => {
      await sleep(50);
      for (let i = 0; i < 5; i++) expect((await t.request({ url: '/api/v1/users/1' })).status).toBe(401);
    });
  });
});

describe.each(engines)('maintenance mode on %s', (engine) => {
  const t = useTestApp(engine, { env: { MAINTENANCE_MODE: 'true' } });

  it('when MAINTENANCE_MODE is on, then every /api path answers 503 with Retry-After', async () => {
    expect503(await t.request({ url: '/api/v1/users/1' }), '60');
    expect503(await t.request({ method: 'POST', url: '/api/v1/users', payload: { username: 'someone' } }), '60');
    expect503(await t.request({ url: '/api/v2/links/abc' }), '60');
    expect503(await t.request({ url: '/api?version=2' }), '60');
  });

  it('when MAINTENANCE_MODE is on, then routes outside /api keep answering', async () => {
    expect((await t.request({ url: '/healthz' })).body).toEqual({ status: 'ok' });
    expect((await t.request({ url: '/readyz' })).status).toBe(200);
    expect((await t.request({ url: '/metrics' })).status).toBe(200);
    const docs = await t.app.inject({ url: '/v3/api-docs' }); // not in the document itself, so not through t.request
    expect(docs.statusCode).toBe(200);
    expect(docs.json().openapi).toBe('3.1.0');
    // A root-level path that is not the API is routed as usual (here: no such route).
    expect((await t.request({ url: '/apiary' })).status).toBe(404);
  });
});
