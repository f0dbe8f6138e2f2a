/**
 * `redirect-hooked` (SPEC §22, issue 40's first figure): what one webhook subscribed to `link.clicked` costs the
 * people's redirect. Two servers on the same 100,000 links, both with WEBHOOK_ALLOW_PRIVATE=true (the receiver is
 * on loopback): `redirect-unhooked` has no hook; `redirect-hooked` has one instance-wide hook (the bench admin's)
 * for `link.clicked`, delivered to a receiver in a process of its own (bench/lib/webhook-receiver.ts) that answers
 * 204 and counts each `webhook-id` once.
 * Browser visits to random codes, caches warmed by a pass over every code, alternating rounds (twice the run's
 * rounds and duration) so that the drift of a shared machine falls on both alike; the hooked row's ratio is to
 * the unhooked one's rounds (target: >= 0.95).
 *
 * Events are written in the click writer's batches either way (one `events` row per human click); the hook adds
 * the deliveries: a lease, a signed POST per event and its attempt row, on the same two cores. Before each round
 * the deliveries catch up (the wait is noted); after the rounds the bench waits until the receiver has every
 * click's event (or 60 s) and notes how many arrived.
 */
import { clickCheck, load, queueDrained, redirectCount, rowOf, slice, type Slice, type Workload } from './lib/drive.js';
import { peakRssBytes, stopServer } from './lib/proc.js';
import type { Row } from './lib/report.js';
import { startReceiver } from './lib/webhook-receiver.js';
import { ADMIN } from './lib/instance.js';
import { BROWSER_UA, startFerry, type BenchContext, type Scenario } from './scenarios.js';

async function createHook(baseUrl: string, hookUrl: string): Promise<void> {
  const post = async (p: string, body: unknown, token?: string) => {
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (token) headers.authorization = `Bearer ${token}`;
    const res = await fetch(`${baseUrl}${p}`, { method: 'POST', headers, body: JSON.stringify(body) });
    if (!res.ok) throw new Error(`POST ${p}: ${res.status} ${await res.text()}`);
    return (await res.json()) as Record<string, unknown>;
  };
  const admin = await post('/api/v1/tokens', ADMIN);
  await post(
    '/api/v1/webhooks',
    { url: hookUrl, events: ['link.clicked'], scope: 'instance' },
    String(admin.accessToken),
  );
}

async function hookCost(ctx: BenchContext): Promise<{ row: Row; more: Row[] }> {
  const codes = ctx.data.files.links100k!.codes;
  const spec: Workload = { workload: 'codes', codesFile: codes, headers: { 'user-agent': BROWSER_UA } };
  const env = { WEBHOOK_ALLOW_PRIVATE: 'true' };
  const hook = await startReceiver();
  const plain = await startFerry(ctx, 'redirect-unhooked', 'links100k', env);
  const hooked = await startFerry(ctx, 'redirect-hooked', 'links100k', env);
  await createHook(hooked.url, hook.url);
  const running = [
    { name: 'redirect-unhooked', server: plain, slices: [] as Slice[] },
    { name: 'redirect-hooked', server: hooked, slices: [] as Slice[] },
  ];
  const pass: Workload = { ...spec, amount: 100_000 };
  for (const c of running) await load(ctx, c.server, pass, ctx.warmup);
  const each = ctx.duration / ctx.rounds;
  // Before each round the hooked server's deliveries catch up, so that neither server's round pays for the
  // other's backlog; what a round leaves undelivered is timed here and noted (delivery lag).
  let drainMs = 0;
  const settled = async (): Promise<void> => {
    for (const other of running) await queueDrained(other.server);
    const started = Date.now();
    await hook.until((await redirectCount(hooked)) ?? 0, 120_000);
    drainMs += Date.now() - started;
  };
  for (let r = 0; r < ctx.rounds * 2; r += 1) {
    for (let i = 0; i < running.length; i += 1) {
      const c = running[(r + i) % running.length]!;
      await settled();
      c.slices.push(await slice(ctx, c.server, spec, each));
    }
  }
  const rows: Row[] = [];
  for (const c of running) {
    const peakRss = peakRssBytes(c.server.child.pid);
    const served = await redirectCount(c.server);
    const clicked = served ?? 0;
    const delivered =
      c.name === 'redirect-hooked'
        ? `${(await hook.until(clicked, 60_000)).unique.toLocaleString('en-US')} of ` +
          `${clicked.toLocaleString('en-US')} link.clicked events delivered; ` +
          `${(drainMs / 1000).toFixed(1)} s waited for deliveries between rounds`
        : null;
    // The records are counted once the server has stopped (SIGTERM writes what it had queued).
    const exitCode = await stopServer(c.server.child);
    const notes = [clickCheck(c.server.dataDir, served), ...(delivered === null ? [] : [delivered])];
    rows.push(
      rowOf(
        c.name,
        c.name === 'redirect-hooked'
          ? 'as redirect-browser, with one instance-wide hook for link.clicked to a loopback receiver; × redirect-unhooked of the same rounds'
          : 'as redirect-browser, no hook; rounds alternating with redirect-hooked',
        c.slices,
        {
          expected: 302,
          notes,
          peakRss,
          exitCode,
          ...(c.name === 'redirect-hooked' ? { baseline: running[0]!.slices } : {}),
        },
      ),
    );
  }
  await hook.close();
  return { row: rows[1]!, more: [rows[0]!] };
}

export const redirectHooked: Scenario = {
  name: 'redirect-hooked',
  needs: ['links100k'],
  describe: () =>
    'GET /{code}, 100,000 links, browser visits, with one link.clicked webhook against none, alternating rounds',
  run: hookCost,
};
