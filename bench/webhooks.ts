/**
 * Webhook throughput (SPEC §22): how many events a second one instance delivers to a receiver on loopback with
 * the default WEBHOOK_CONCURRENCY (16). Run once, briefly:
 *
 *   npx tsx bench/webhooks.ts
 *
 * 1. The app is built in process on a fresh embedded database (or DATABASE_URL's PostgreSQL), with
 *    WEBHOOK_ALLOW_PRIVATE=true for the loopback receiver; a user and one hook for `link.created` through the API.
 * 2. EVENTS events (default 10,000) are written as the change writers write them (recordPublicEvents, 500 a
 *    transaction), as fast as the database takes them.
 * 3. Measured: from the first write to the receiver's last request (each event once, verified by webhook-id),
 *    events/s; and the receiver's requests in the busiest second.
 *
 * Prints one JSON line (with the process's peak RSS). Env: EVENTS, WEBHOOK_CONCURRENCY, DATABASE_URL. The SPEC's
 * floor: 1,000 events/s.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { createStorage } from '../src/db/database.js';
import { recordPublicEvents } from '../src/db/events.js';
import { startReceiver } from './lib/webhook-receiver.js';

const EVENTS = Number(process.env.EVENTS ?? 10_000);
const dir = mkdtempSync(path.join(tmpdir(), 'ferry-webhooks-bench-'));
const receiver = await startReceiver();
const url = receiver.url;

const config = loadConfig({
  DATA_DIR: dir,
  JWT_SECRET: 'bench-secret-that-is-at-least-32-bytes-long!',
  LOG_LEVEL: 'warn',
  RATE_LIMIT_PER_MINUTE: '100000',
  WEBHOOK_ALLOW_PRIVATE: 'true',
  ...(process.env.DATABASE_URL ? { DATABASE_URL: process.env.DATABASE_URL } : {}),
  ...(process.env.WEBHOOK_CONCURRENCY ? { WEBHOOK_CONCURRENCY: process.env.WEBHOOK_CONCURRENCY } : {}),
});
const storage = createStorage(config);
const app = await buildApp(config, { storage });
try {
  await app.ready();
  const signUp = { username: 'bench', email: 'bench@example.com', password: 'correct-horse-battery' };
  const user = (await app.inject({ method: 'POST', url: '/api/v1/users', payload: signUp })).json<{ id: number }>();
  const credentials = { username: signUp.username, password: signUp.password };
  const login = await app.inject({ method: 'POST', url: '/api/v1/tokens', payload: credentials });
  const token = login.json<{ accessToken: string }>().accessToken;
  const hook = await app.inject({
    method: 'POST',
    url: '/api/v1/webhooks',
    headers: { authorization: `Bearer ${token}` },
    payload: { url, events: ['link.created'] },
  });
  if (hook.statusCode !== 201) throw new Error(`hook: ${hook.statusCode} ${hook.body}`);

  const started = performance.now();
  for (let i = 0; i < EVENTS; i += 500) {
    const batch = Array.from({ length: Math.min(500, EVENTS - i) }, (_, j) => ({
      type: 'link.created' as const,
      userId: user.id,
      linkId: i + j + 1,
      data: { id: i + j + 1, short_code: `b${i + j}`, original_url: 'https://example.com/' },
    }));
    await storage.db.transaction().execute((tx) => recordPublicEvents(tx, storage.dialect, batch));
  }
  const written = performance.now() - started;
  const counts = await receiver.until(EVENTS, 600_000);
  if (counts.unique < EVENTS) throw new Error(`the receiver has ${counts.unique} of ${EVENTS} events after 10 minutes`);
  const seconds = (performance.now() - started) / 1000;
  console.log(
    JSON.stringify({
      bench: 'webhooks',
      engine: storage.dialect.name,
      events: EVENTS,
      concurrency: config.webhookConcurrency,
      writeMs: Math.round(written),
      seconds: Number(seconds.toFixed(2)),
      eventsPerSecond: Math.round(EVENTS / seconds),
      busiestSecond: counts.busiestSecond,
      requests: counts.requests,
      // the process's peak resident memory (the app, its click writer thread, the deliveries' connections)
      peakRssMb: Math.round(process.resourceUsage().maxRSS / 1024),
    }),
  );
} finally {
  await app.close();
  await storage.close();
  await receiver.close();
  rmSync(dir, { recursive: true, force: true });
}
