import { performance } from 'node:perf_hooks';
import type { FastifyBaseLogger } from 'fastify';
import { OutboundError, type OutboundHttp } from '../../infra/outbound-http.js';
import type { Clock } from '../../lib/clock.js';
import type { CheckResult, DueKey, DueLink, LinkChecksRepository } from './link-checks.repository.js';
import { answerOutcome, failureOutcome, nextCheckAt, nextHealth, type CheckOutcome } from './link-health.js';

/** SPEC §24's bounds of one check. */
export const CHECK_DEADLINE_MS = 10_000;
export const CHECK_MAX_BODY_BYTES = 64 * 1024;
export const CHECK_MAX_REDIRECTS = 5;

/** Due links read at a time, and held in memory at most (waiting for their host or their turn). */
const DUE_BATCH = 500;
const MAX_BUFFERED = 5_000;
/** Checks under way at once at most, whatever the rate (each holds a socket for up to 10 s). */
const MAX_IN_FLIGHT = 256;
/** Results written per transaction at most, and how long the first of a batch waits for others. */
const WRITE_BATCH = 200;
const WRITE_DELAY_MS = 50;
/** With nothing due, how often a slice looks again (a new link is due at once). */
const IDLE_POLL_MS = 1_000;

export interface LinkCheckerDeps {
  repository: Pick<LinkChecksRepository, 'due' | 'postpone' | 'record'>;
  outbound: OutboundHttp;
  clock: Clock;
  log: Pick<FastifyBaseLogger, 'info' | 'warn' | 'error' | 'debug'>;
  /** LINK_CHECK_INTERVAL_HOURS in ms */
  intervalMs: number;
  /** LINK_CHECKS_PER_MINUTE */
  perMinute: number;
  /** LINK_CHECK_ALLOW_PRIVATE */
  allowPrivate: boolean;
  /** `Ferry-LinkCheck/<version> (+<PUBLIC_BASE_URL>)` */
  userAgent: string;
  /** how long one slice starts checks (the job's run), default 30 s */
  sliceMs?: number;
  /** a check's result was written and its status changed: this instance's cache forgets the link's names */
  onStatusChange?: (row: { domain_id: number; short_code: string; aliases: string }) => void;
}

interface Queued {
  link: DueLink;
  host: string;
}

const hostOf = (url: string): string => {
  try {
    return new URL(url).hostname.toLowerCase();
  } catch {
    return '';
  }
};

/** A disabled or expired link is not checked: it is looked at again at its next slot. */
const NOT_CHECKED = { status: 'unknown', failures: 0, since: null } as const;

/** Resolves after `ms`, or at once when the signal aborts. */
const pause = (ms: number, signal: AbortSignal | undefined): Promise<void> =>
  new Promise((resolve) => {
    if (signal?.aborted || ms <= 0) return resolve();
    const done = () => {
      clearTimeout(t);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const t = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });

/**
 * The hosts' queues of one slice: a link whose host has a check under way (or queued to start) waits behind it;
 * `ready` holds one link per free host, in the order they were read.
 */
function hostQueues() {
  const ready: Queued[] = [];
  const waiting = new Map<string, Queued[]>();
  const busy = new Set<string>();
  let size = 0;
  return {
    ready,
    get size() {
      return size;
    },
    add(q: Queued): void {
      size += 1;
      if (!busy.has(q.host)) {
        busy.add(q.host);
        ready.push(q);
        return;
      }
      const line = waiting.get(q.host);
      if (line) line.push(q);
      else waiting.set(q.host, [q]);
    },
    take(): Queued {
      size -= 1;
      return ready.shift()!;
    },
    /** The check on `host` ended: the next link of that host may start. */
    release(host: string): void {
      const line = waiting.get(host);
      const next = line?.shift();
      if (line && line.length === 0) waiting.delete(host);
      if (next) ready.push(next);
      else busy.delete(host);
    },
  };
}

/** One check of a link's destination and its result (link-health.ts decides); null: cancelled (shutting down). */
function createCheck(deps: LinkCheckerDeps) {
  const { outbound, clock, log } = deps;
  return async (link: DueLink, signal: AbortSignal | undefined): Promise<CheckResult | null> => {
    let outcome: CheckOutcome;
    try {
      const res = await outbound.request({
        url: link.original_url,
        method: 'GET',
        headers: { 'user-agent': deps.userAgent, accept: '*/*' },
        maxRedirects: CHECK_MAX_REDIRECTS,
        deadlineMs: CHECK_DEADLINE_MS,
        maxBodyBytes: CHECK_MAX_BODY_BYTES,
        onTooLarge: 'truncate',
        allowPrivate: deps.allowPrivate,
        ...(signal ? { signal } : {}),
      });
      outcome = answerOutcome(res.status);
    } catch (err) {
      if (!(err instanceof OutboundError)) throw err;
      if (err.failure === 'cancelled') return null; // shutting down: checked again later
      log.debug({ linkId: link.id, failure: err.failure, detail: err.detail }, 'link check failed');
      outcome = failureOutcome(err);
    }
    const now = clock.now();
    const current = {
      status: link.health_status,
      failures: Number(link.health_failures),
      since: link.health_since === null ? null : Number(link.health_since),
    };
    const health = nextHealth(current, outcome, now);
    return { link, outcome, health, checkedAt: now, nextCheckAt: nextCheckAt(link.id, health, now, deps.intervalMs) };
  };
}

/**
 * Results written a batch at a time (at most WRITE_BATCH, or what WRITE_DELAY_MS gathered), in order, one
 * transaction each; `drain` waits for everything given so far.
 */
function resultWriter(deps: LinkCheckerDeps) {
  const pending: CheckResult[] = [];
  let timer: NodeJS.Timeout | null = null;
  let chain: Promise<void> = Promise.resolve();
  const flush = () => {
    if (timer) clearTimeout(timer);
    timer = null;
    const batch = pending.splice(0);
    if (batch.length === 0) return;
    chain = chain.then(async () => {
      try {
        for (const row of await deps.repository.record(batch)) deps.onStatusChange?.(row);
      } catch (err) {
        // not written: the links stay due and are checked again
        deps.log.error({ err, links: batch.length }, 'link checks could not be recorded');
      }
    });
  };
  return {
    add(r: CheckResult): void {
      pending.push(r);
      if (pending.length >= WRITE_BATCH) flush();
      else timer ??= setTimeout(flush, WRITE_DELAY_MS);
    },
    drain(): Promise<void> {
      flush();
      return chain;
    },
  };
}

/** The due links, read in order a batch at a time into the queues; a disabled or expired one is put off, unchecked. */
function dueReader(deps: LinkCheckerDeps, queues: ReturnType<typeof hostQueues>) {
  let cursor: DueKey | null = null;
  let exhausted = false;
  return {
    get more() {
      return !exhausted && queues.size < MAX_BUFFERED;
    },
    /** From the start again: links made due meanwhile (a new link is due at 0) come first. */
    rewind(): void {
      cursor = null;
      exhausted = false;
    },
    async read(): Promise<void> {
      const now = deps.clock.now();
      const rows = await deps.repository.due(now, cursor, DUE_BATCH);
      if (rows.length < DUE_BATCH) exhausted = true;
      const last = rows[rows.length - 1];
      if (last) cursor = { at: Number(last.next_check_at), id: last.id };
      for (const link of rows) {
        const inactive = link.disabled_at !== null || (link.expires_at !== null && Number(link.expires_at) <= now);
        if (inactive) await deps.repository.postpone(link.id, nextCheckAt(link.id, NOT_CHECKED, now, deps.intervalMs));
        else queues.add({ link, host: hostOf(link.original_url) });
      }
    },
  };
}

/**
 * The checks of due links (SPEC §24), a slice at a time: one run of the `link-checks` job, which one instance
 * holds at a time (infra/job-runner.ts), so the rate and the one-per-host rule hold for the whole deployment.
 *
 * - The rate: consecutive starts are at least 60 s / LINK_CHECKS_PER_MINUTE apart, so any 60 s holds at most
 *   LINK_CHECKS_PER_MINUTE starts; a slice's first start comes one spacing after the slice began, and every
 *   start of the slice before came before that slice ended, so the spacing holds across slices (and instances).
 * - One at a time per host: a link whose destination's host has a check under way (or queued) waits for it;
 *   a slice ends only once its checks have, so the next slice (on any instance) starts with no host busy.
 * - Due links are read in next_check_at order in batches; a link's result moves it to its next slot, so what
 *   is checked leaves the due set.
 */
export function createLinkChecker(deps: LinkCheckerDeps) {
  const spacingMs = 60_000 / deps.perMinute;
  const sliceMs = deps.sliceMs ?? 30_000;
  const check = createCheck(deps);
  const writer = resultWriter(deps);

  /** One slice: starts checks for sliceMs at the rate, then waits for them. The number of checks started. */
  async function slice(signal?: AbortSignal): Promise<number> {
    const end = performance.now() + sliceMs;
    let nextStart = performance.now() + spacingMs;
    const queues = hostQueues();
    const due = dueReader(deps, queues);
    const inFlight = new Set<Promise<void>>();
    let started = 0;
    const live = () => !signal?.aborted && performance.now() < end;
    const start = (q: Queued) => {
      const p: Promise<void> = check(q.link, signal)
        .then((result) => {
          if (result) writer.add(result);
        })
        .catch((err: unknown) => deps.log.error({ err, linkId: q.link.id }, 'link check failed'))
        .finally(() => {
          inFlight.delete(p);
          queues.release(q.host);
        });
      inFlight.add(p);
    };

    while (live()) {
      if (queues.ready.length === 0) {
        if (due.more) await due.read();
        // each check ends by its deadline, or at once when the signal aborts it
        else if (inFlight.size > 0) await Promise.race(inFlight);
        else {
          // nothing queued, nothing under way: look again in a while
          await writer.drain(); // what was checked is no longer due when the walk starts again
          await pause(Math.min(IDLE_POLL_MS, end - performance.now()), signal);
          due.rewind();
        }
        continue;
      }
      if (inFlight.size >= MAX_IN_FLIGHT) {
        await Promise.race(inFlight);
        continue;
      }
      await pause(nextStart - performance.now(), signal);
      if (!live()) break;
      nextStart = Math.max(nextStart, performance.now()) + spacingMs;
      started += 1;
      start(queues.take());
    }
    await Promise.allSettled([...inFlight]);
    await writer.drain();
    return started;
  }

  return { slice };
}

export type LinkChecker = ReturnType<typeof createLinkChecker>;
