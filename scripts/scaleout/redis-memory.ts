/**
 * Redis memory per million entries of what the scale-out setup keeps there (docs/deployment.md, sizing).
 * Starts a private redis-server on a free loopback port (no persistence), fills one kind of data at a time
 * and reads `used_memory` from INFO memory before and after.
 *
 *   npx tsx scripts/scaleout/redis-memory.ts [count=1000000]
 *
 * Also measures, for comparison, the stream with one field per property (the encoding not chosen) and the
 * process heap of the in-process redirect cache (links are cached per instance, not in Redis).
 */
import { spawn } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { once } from 'node:events';
import net from 'node:net';
import { Redis } from 'ioredis';
import { CLICK_FIELD, encodeClick } from '../../src/modules/clicks/transport/click-stream.js';
import { LinkCache } from '../../src/modules/redirect/link-cache.js';

const COUNT = Number(process.argv[2] ?? 1_000_000);
const PIPELINE = 10_000;
const UA =
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0 Safari/537.36';

async function freePort(): Promise<number> {
  const s = net.createServer().listen(0, '127.0.0.1');
  await once(s, 'listening');
  const { port } = s.address() as net.AddressInfo;
  s.close();
  return port;
}

const code = () => randomBytes(6).toString('base64url').slice(0, 8);
const click = (i: number) => ({
  key: randomUUID(),
  linkId: 1 + (i % 100_000),
  shortCode: code(),
  clickedAt: 1_790_000_000_000 + i,
  ip: `203.0.${(i >> 8) & 255}.${i & 255}`,
  userAgent: UA,
  referrer: 'https://news.example.com/',
});

async function measure(
  redis: Redis,
  label: string,
  add: (p: ReturnType<Redis['pipeline']>, i: number) => void,
): Promise<void> {
  await redis.flushall();
  const before = Number(/used_memory:(\d+)/.exec(await redis.info('memory'))![1]);
  for (let i = 0; i < COUNT; i += PIPELINE) {
    const p = redis.pipeline();
    for (let j = i; j < Math.min(COUNT, i + PIPELINE); j += 1) add(p, j);
    await p.exec();
  }
  const after = Number(/used_memory:(\d+)/.exec(await redis.info('memory'))![1]);
  const perMillion = ((after - before) / COUNT) * 1_000_000;
  process.stdout.write(
    `${label.padEnd(58)} ${(perMillion / 2 ** 20).toFixed(0).padStart(6)} MiB per million (${((after - before) / COUNT).toFixed(0)} B each)\n`,
  );
}

const port = await freePort();
const server = spawn(
  'redis-server',
  ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
  { stdio: 'ignore' },
);
try {
  await new Promise((r) => setTimeout(r, 300));
  const redis = new Redis({ port, host: '127.0.0.1' });
  const version = /redis_version:(\S+)/.exec(await redis.info('server'))![1];
  process.stdout.write(`redis ${version}, ${COUNT.toLocaleString('en')} entries per measurement\n`);

  await measure(redis, 'click stream entries (one JSON field, as shipped)', (p, i) =>
    p.xadd('ferry:clicks', '*', CLICK_FIELD, encodeClick(click(i))),
  );
  await measure(redis, 'click stream entries (one field per property, not chosen)', (p, i) => {
    const c = click(i);
    p.xadd(
      'ferry:clicks',
      '*',
      'k',
      c.key,
      'l',
      String(c.linkId),
      's',
      c.shortCode,
      't',
      String(c.clickedAt),
      'i',
      c.ip,
      'u',
      c.userAgent,
      'r',
      c.referrer,
    );
  });
  await measure(redis, 'revoked tokens (deny list: one key per jti, with TTL)', (p) =>
    p.set(`ferry:revoked:${randomBytes(16).toString('base64url')}`, '1', 'PX', 3_600_000),
  );
  await measure(redis, 'rate-limit counters (one key per client and policy, TTL)', (p, i) =>
    p.set(`ferry:ratelimit:default:ip:10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`, '17', 'PX', 60_000),
  );
  await redis.quit();

  // The redirect cache lives in each API process (LINK cache capacity 100,000 by default).
  globalThis.gc?.();
  const heapBefore = process.memoryUsage().heapUsed;
  const cache = new LinkCache({ now: () => 0 }, { capacity: COUNT, positiveTtlMs: 30_000, negativeTtlMs: 5_000 });
  for (let i = 0; i < COUNT; i += 1) {
    const c = code();
    cache.set(
      c,
      {
        kind: 'link',
        id: i,
        code: c,
        alias: null,
        url: `https://example.com/articles/${i}/some-readable-slug`,
        expiresAt: null,
        rules: null,
        preview: null,
        broken: null,
      },
      cache.epoch(),
    );
  }
  globalThis.gc?.();
  const heap = process.memoryUsage().heapUsed - heapBefore;
  process.stdout.write(
    `${'redirect cache entries (process heap, per API instance)'.padEnd(58)} ${(((heap / COUNT) * 1_000_000) / 2 ** 20).toFixed(0).padStart(6)} MiB per million (${(heap / COUNT).toFixed(0)} B each; ${cache.size()} cached)\n`,
  );
} finally {
  server.kill('SIGKILL');
}
