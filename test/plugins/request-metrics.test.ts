import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { createMetrics } from '../../src/infra/metrics.js';
import requestMetricsPlugin from '../../src/plugins/request-metrics.js';
import { TestClock } from '../helpers/app.js';

/** The redirect is another module's route; the histogram must pick it up by its route template alone. */
describe('redirect latency', () => {
  it('when GET or HEAD /{code} is answered, then ferry_redirect_duration_seconds observes it by status; other routes do not', async () => {
    const metrics = createMetrics({
      storage: { connections: () => ({ total: 1, idle: 1, waiting: 0, max: 1 }) },
      clock: new TestClock(),
    });
    const app = Fastify();
    await app.register(requestMetricsPlugin, { metrics });
    app.get('/:code', async (request, reply) => {
      const { code } = request.params as { code: string };
      return code === 'gone' ? reply.code(410).send({}) : reply.redirect('https://example.com/', 302);
    });
    app.get('/other/:id', { config: { redirect: false } }, async () => ({}));
    app.get('/r/:slug', { config: { redirect: true } }, async (_request, reply) =>
      reply.redirect('https://example.com/', 307),
    );

    await app.inject({ url: '/abc' });
    await app.inject({ url: '/def' });
    await app.inject({ method: 'HEAD', url: '/abc' });
    await app.inject({ url: '/gone' });
    await app.inject({ url: '/other/1' });
    await app.inject({ url: '/r/x' });
    const { body } = await metrics.render();
    expect(body).toMatch(/^ferry_redirect_duration_seconds_count\{status_code="302"\} 3$/m);
    expect(body).toMatch(/^ferry_redirect_duration_seconds_count\{status_code="410"\} 1$/m);
    expect(body).toMatch(/^ferry_redirect_duration_seconds_count\{status_code="307"\} 1$/m);
    expect(body).toMatch(/^ferry_redirect_duration_seconds_bucket\{le="0.01",status_code="302"\} \d+$/m);
    expect(body).toMatch(/^http_requests_total\{method="GET",route="\/:code",status_code="302"\} 2$/m);
    expect(body).toMatch(/^http_requests_total\{method="GET",route="\/other\/:id",status_code="200"\} 1$/m);
    await app.close();
  });
});
