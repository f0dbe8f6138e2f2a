import { describe, expect, it } from 'vitest';
import { createServingLoad } from '../../src/infra/serving-load.js';

/** Holds the event loop for `ms`, then lets timers run (a sample falls between two such spins). */
async function spin(ms: number): Promise<void> {
  const until = performance.now() + ms;
  while (performance.now() < until);
  await new Promise((resolve) => setImmediate(resolve));
}

/** Spins (or idles) until `done()` or `rounds` rounds; whether it came. */
async function until(done: () => boolean, round: () => Promise<void>, rounds = 200): Promise<boolean> {
  for (let i = 0; i < rounds; i += 1) {
    if (done()) return true;
    await round();
  }
  return done();
}

describe('whether the process is busy serving', () => {
  it('when the event loop is over half busy and requests are answered, then busy; the same load with no request, not busy', async () => {
    let answered = 0;
    // 50 requests a second: two in a sample of 40 ms (BUSY_REQUESTS_PER_SECOND is a production figure)
    const load = createServingLoad(() => answered, { sampleMs: 40, calmMs: 120, requestsPerSecond: 50 });
    try {
      expect(load.busy()).toBe(false);
      const serving = async () => {
        answered += 1;
        await spin(15);
      };
      expect(await until(() => load.busy(), serving)).toBe(true);
      // as busy, but its own work (a dispatcher catching up alone): not busy serving
      expect(
        await until(
          () => !load.busy(),
          () => spin(15),
        ),
      ).toBe(true);
      expect(await until(() => load.busy(), serving)).toBe(true);
      // as busy, with fewer requests than the rate (a dashboard polling meanwhile): not busy serving
      const polled = async () => {
        answered += 1;
        await spin(60);
      };
      expect(await until(() => !load.busy(), polled)).toBe(true);
      // requests answered at the rate, the loop mostly idle: not busy
      expect(await until(() => load.busy(), serving)).toBe(true);
      const calm = async () => {
        answered += 2;
        await new Promise((resolve) => setTimeout(resolve, 20));
      };
      expect(await until(() => !load.busy(), calm)).toBe(true);
    } finally {
      load.stop();
    }
  });
});
