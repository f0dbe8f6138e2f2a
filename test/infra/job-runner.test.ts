import { PassThrough } from 'node:stream';
import type { FastifyBaseLogger } from 'fastify';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createJobLeases } from '../../src/infra/job-leases.js';
import { createJobRunner, type JobRunner, type JobRunnerDeps, type PeriodicJob } from '../../src/infra/job-runner.js';
import { systemClock } from '../../src/lib/clock.js';
import { createTestApp, engines, TestClock } from '../helpers/app.js';
import { createLink } from '../helpers/factories.js';
import { useTestApp } from '../helpers/fixtures.js';

const MINUTE = 60_000;

interface Entry {
  level: string;
  msg: string;
  [key: string]: unknown;
}

/** A logger that keeps what it was told, with its child bindings (the runner's `holder`). */
function recordingLog(entries: Entry[], bindings: Record<string, unknown> = {}): FastifyBaseLogger {
  const at = (level: string) => (obj: object | string, msg?: string) =>
    entries.push(
      typeof obj === 'string' ? { level, msg: obj, ...bindings } : { level, msg: msg ?? '', ...bindings, ...obj },
    );
  const log = {
    level: 'info',
    ...Object.fromEntries(['info', 'warn', 'error', 'debug', 'trace', 'fatal'].map((l) => [l, at(l)])),
    child: (more: Record<string, unknown>) => recordingLog(entries, { ...bindings, ...more }),
  };
  return log as unknown as FastifyBaseLogger;
}

/** Every held job, let go after each test (a failed test must not leave stop() waiting for it). */
const heldJobs: Array<{ release: () => void }> = [];

/** A job whose runs are counted, and whose runs can be held open until let go. */
function countedJob(name: string, everyMs: number, opts: { perInstance?: boolean } = {}) {
  let holding = false;
  const pending: Array<{ resolve: (n: number) => void; reject: (err: Error) => void }> = [];
  let started = 0;
  const settle = (how: (p: (typeof pending)[number]) => void) => {
    holding = false;
    for (const p of pending.splice(0)) how(p);
  };
  const job = {
    name,
    everyMs,
    ...opts,
    run: (): Promise<number> => {
      started += 1;
      const n = started;
      if (!holding) return Promise.resolve(n);
      return new Promise((resolve, reject) => pending.push({ resolve: () => resolve(n), reject }));
    },
    runs: () => started,
    hold: () => {
      holding = true;
    },
    release: () => settle((p) => p.resolve(0)),
    fail: (err: Error) => settle((p) => p.reject(err)),
  } satisfies PeriodicJob & Record<string, unknown>;
  heldJobs.push(job);
  return job;
}

/**
 * Periodic jobs take turns through `job_leases` (infra/job-runner.ts, migration 037): two runners on one database
 * stand for two instances. Time is a TestClock the test moves; a held run is a job that waits to be let go.
 */
describe.each(engines)('job runner on %s', (engine) => {
  const t = useTestApp(engine);
  let seq = 0;
  const runners: JobRunner[] = [];
  const entries: Entry[] = [];
  afterEach(async () => {
    for (const j of heldJobs.splice(0)) j.release();
    for (const r of runners.splice(0)) await r.stop();
    entries.splice(0);
  });
  const uniqueName = (what: string) => `test-${what}-${(seq += 1)}`;
  function runner(holder: string, clock: JobRunnerDeps['clock'], opts: Partial<JobRunnerDeps> = {}): JobRunner {
    const leases = createJobLeases(t.storage.db);
    const r = createJobRunner({ leases, log: recordingLog(entries), clock, holder, leaseMs: 10 * MINUTE, ...opts });
    runners.push(r);
    return r;
  }
  const leaseOf = (name: string) =>
    t.storage.db.selectFrom('job_leases').selectAll().where('name', '=', name).executeTakeFirst();
  it('when two instances try a due job at once, period after period, then one runs it each period', async () => {
    const clock = new TestClock();
    const job = countedJob(uniqueName('once'), MINUTE);
    const [a, b] = [runner('a', clock), runner('b', clock)];
    a.every(job);
    b.every(job);
    // Never run before a first period: its first turn comes a period after the start, as before.
    clock.advance(MINUTE);
    for (let period = 1; period <= 4; period += 1) {
      const outcomes = await Promise.all([a.attempt(job.name), b.attempt(job.name)]);
      expect(outcomes.map((o) => o.outcome).sort()).toEqual(['not-due', 'ok']);
      const again = await Promise.all([a.attempt(job.name), b.attempt(job.name)]);
      expect(again.map((o) => o.outcome)).toEqual(['not-due', 'not-due']);
      expect(job.runs()).toBe(period);
      clock.advance(MINUTE);
    }
    const row = await leaseOf(job.name);
    const lastStart = clock.now() - MINUTE;
    expect(row).toMatchObject({ lease_until: null, started_at: lastStart, finished_at: lastStart });
    expect(['a', 'b']).toContain(row?.holder);
    // Which instance ran what: each run's line names its holder.
    const ran = entries.filter((e) => e.msg === 'background job ran' && e.job === job.name);
    expect(ran.map((e) => [e.level, e.result])).toEqual([
      ['info', 1],
      ['info', 2],
      ['info', 3],
      ['info', 4],
    ]);
    for (const e of ran) expect(['a', 'b']).toContain(e.holder);
  });

  it('when many instances claim the same turn at the same moment, then exactly one claim succeeds', async () => {
    const leases = createJobLeases(t.storage.db);
    const name = uniqueName('race');
    const now = Date.now();
    const turn = { name, everyMs: MINUTE, leaseMs: MINUTE };
    const holders = ['a', 'b', 'c', 'd', 'e'];
    const claimAt = (now: number) => Promise.all(holders.map((holder) => leases.claim({ ...turn, holder, now })));
    const claims = await claimAt(now);
    expect(claims.filter(Boolean)).toHaveLength(1);
    await leases.finish(name, (await leaseOf(name))!.holder, now, now + 1);
    const next = await claimAt(now + MINUTE);
    expect(next.filter(Boolean)).toHaveLength(1);
  });
  it('when the instance running a job dies (no heartbeat), then another takes over once its lease ends', async () => {
    const clock = new TestClock();
    const job = countedJob(uniqueName('takeover'), MINUTE);
    // `a` never renews within the test: as good as dead once its run started.
    const a = runner('a', clock, { leaseMs: 5 * MINUTE, heartbeatMs: 3_600_000 });
    const b = runner('b', clock, { leaseMs: 5 * MINUTE });
    a.every(job);
    b.every(job);
    clock.advance(MINUTE);
    job.hold();
    const aRun = a.attempt(job.name);
    await vi.waitFor(() => expect(job.runs()).toBe(1));
    clock.advance(5 * MINUTE - 1);
    expect(await b.attempt(job.name)).toMatchObject({ outcome: 'not-due' });
    clock.advance(1);
    const taken = b.attempt(job.name);
    await vi.waitFor(() => expect(job.runs()).toBe(2));
    job.release();
    expect(await taken).toMatchObject({ outcome: 'ok' });
    expect(entries).toContainEqual(
      expect.objectContaining({
        level: 'warn',
        job: job.name,
        holder: 'b',
        from: 'a',
        msg: expect.stringMatching(/taken over/),
      }),
    );
    expect(await leaseOf(job.name)).toMatchObject({ holder: 'b', lease_until: null, finished_at: clock.now() });
    // The dead run ending after all changes nothing of b's turn.
    await aRun;
    expect(await leaseOf(job.name)).toMatchObject({ holder: 'b', started_at: clock.now(), finished_at: clock.now() });
  });
  it('when a run lasts longer than its lease, then its heartbeat renews it and nobody takes the job over', async () => {
    const clock = new TestClock();
    const job = countedJob(uniqueName('renewed'), MINUTE);
    const a = runner('a', clock, { leaseMs: 5 * MINUTE, heartbeatMs: 5 });
    const b = runner('b', clock, { leaseMs: 5 * MINUTE });
    a.every(job);
    b.every(job);
    clock.advance(MINUTE);
    const startedAt = clock.now();
    job.hold();
    const aRun = a.attempt(job.name);
    await vi.waitFor(() => expect(job.runs()).toBe(1));
    clock.advance(5 * MINUTE - 1);
    await vi.waitFor(async () => expect((await leaseOf(job.name))?.lease_until).toBe(clock.now() + 5 * MINUTE));
    // Past the first lease: only a renewed one keeps b out.
    clock.advance(2);
    expect(await b.attempt(job.name)).toMatchObject({ outcome: 'not-due' });
    expect(job.runs()).toBe(1);
    job.release();
    expect(await aRun).toMatchObject({ outcome: 'ok' });
    expect(await leaseOf(job.name)).toMatchObject({
      holder: 'a',
      started_at: startedAt,
      lease_until: null,
      finished_at: clock.now(),
    });
    expect(entries.filter((e) => e.level === 'warn')).toEqual([]);
  });
  it('when an instance stops during a run, then stop() waits for it and lets the lease go', async () => {
    const clock = new TestClock();
    const job = countedJob(uniqueName('stop'), MINUTE);
    const a = runner('a', clock, { leaseMs: 10 * MINUTE });
    const b = runner('b', clock, { leaseMs: 10 * MINUTE });
    a.every(job);
    b.every(job);
    clock.advance(MINUTE);
    job.hold();
    void a.attempt(job.name);
    await vi.waitFor(() => expect(job.runs()).toBe(1));
    let stopped = false;
    const stopping = a.stop().then(() => {
      stopped = true;
    });
    expect(await b.attempt(job.name)).toMatchObject({ outcome: 'not-due' });
    expect(stopped).toBe(false);
    job.release();
    await stopping;
    expect((await leaseOf(job.name))?.lease_until).toBeNull();
    // A period after a's start, well within the 10-minute lease it held: b's turn.
    clock.advance(MINUTE);
    expect(await b.attempt(job.name)).toMatchObject({ outcome: 'ok' });
    expect(job.runs()).toBe(2);
  });
  it('when a run fails, then it is logged and counted, the lease let go, the next period runs it', async () => {
    const clock = new TestClock();
    const job = countedJob(uniqueName('fails'), MINUTE);
    const onRun = vi.fn();
    const a = runner('a', clock, { onRun });
    a.every(job);
    clock.advance(MINUTE);
    job.hold();
    const run = a.attempt(job.name);
    await vi.waitFor(() => expect(job.runs()).toBe(1));
    expect(await a.attempt(job.name)).toMatchObject({ outcome: 'busy' });
    job.fail(new Error('boom'));
    expect(await run).toMatchObject({ outcome: 'failed' });
    expect(onRun).toHaveBeenCalledWith(job.name, 'failed');
    const failure = { level: 'error', job: job.name, holder: 'a', msg: 'background job failed' };
    expect(entries).toContainEqual(expect.objectContaining(failure));
    expect((await leaseOf(job.name))?.lease_until).toBeNull();
    clock.advance(MINUTE);
    expect(await a.attempt(job.name)).toMatchObject({ outcome: 'ok' });
    expect(onRun).toHaveBeenLastCalledWith(job.name, 'ok');
  });
  it("when a job is per instance (its work is the process's own), then every instance runs it", async () => {
    const clock = new TestClock();
    const job = countedJob(uniqueName('local'), MINUTE, { perInstance: true });
    const [a, b] = [runner('a', clock), runner('b', clock)];
    a.every(job);
    b.every(job);
    expect((await Promise.all([a.attempt(job.name), b.attempt(job.name)])).map((o) => o.outcome)).toEqual(['ok', 'ok']);
    expect(job.runs()).toBe(2);
    expect(await leaseOf(job.name)).toBeUndefined();
    // Every few seconds in every instance: at debug only.
    expect(entries.filter((e) => e.msg === 'background job ran').map((e) => e.level)).toEqual(['debug', 'debug']);
  });
  it('when two instances run a job on their timers, then its runs start a period apart or more', async () => {
    const everyMs = 40;
    const starts: number[] = [];
    const job: PeriodicJob = { name: uniqueName('timers'), everyMs, run: async () => starts.push(systemClock.now()) };
    const [a, b] = [runner('a', systemClock, { leaseMs: MINUTE }), runner('b', systemClock, { leaseMs: MINUTE })];
    a.every(job);
    b.every(job);
    await vi.waitFor(() => expect(starts.length).toBeGreaterThanOrEqual(4), { timeout: 5_000 });
    await Promise.all([a.stop(), b.stop()]);
    for (let i = 1; i < starts.length; i += 1) expect(starts[i]! - starts[i - 1]!).toBeGreaterThanOrEqual(everyMs);
  });
});

/** The app's log lines (JSON), as they are written. */
function logLines(): { stream: PassThrough; lines: () => Array<Record<string, unknown>> } {
  const stream = new PassThrough();
  let text = '';
  stream.on('data', (chunk: Buffer) => (text += chunk.toString()));
  return {
    stream,
    lines: () =>
      text
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as Record<string, unknown>),
  };
}

describe.each(engines)("the app's jobs on %s", (engine) => {
  const JOB = 'sweep-expired-links';

  it("when another instance holds a job's lease, then the app waits, then runs, logs, counts it", async () => {
    const clock = new TestClock();
    const log = logLines();
    const t = await createTestApp(engine, { clock, logStream: log.stream, deps: { jobRunner: { holder: 'app-one' } } });
    try {
      // Something for the sweep to do: a run that finds nothing logs at debug only.
      await createLink(t, { expires_at: new Date(clock.now() + 1_000).toISOString() });
      const leases = createJobLeases(t.storage.db);
      const other = { name: JOB, holder: 'other', everyMs: MINUTE, leaseMs: MINUTE };
      expect(await leases.claim({ ...other, now: clock.now() })).toBe(true);
      expect(await t.app.jobs.attempt(JOB)).toMatchObject({ outcome: 'not-due' });
      clock.advance(MINUTE);
      expect(await t.app.jobs.attempt(JOB)).toMatchObject({ outcome: 'ok' });
      expect(await leases.find(JOB)).toMatchObject({
        holder: 'app-one',
        started_at: clock.now(),
        finished_at: clock.now(),
        lease_until: null,
      });
      const metrics = (await t.request({ url: '/metrics' })).text;
      expect(metrics).toMatch(/^ferry_job_runs_total\{job="sweep-expired-links",outcome="ok"\} 1$/m);
      const ran = { msg: 'background job ran', job: JOB, holder: 'app-one', result: 1 };
      expect(log.lines()).toContainEqual(expect.objectContaining(ran));
    } finally {
      await t.close();
    }
  });
});
