/**
 * npm run bench [-- --quick] [-- --only=redirect,stats] [-- --profile]
 * (`--only=million`: the opt-in million-link lists and searches, bench/million.ts, about ten minutes)
 *
 * Every benchmark, in sequence, on the embedded default (SQLite), each server and each load
 * generator in its own process (servers: `node dist/src/server.js` as in production, and the bare Fastify
 * baseline; load: bench/load.ts, autocannon, 10 connections on loopback). Writes one Markdown table and a
 * JSON file to bench/results/ and copies the table to bench/LATEST.md. See bench/scenarios.ts for what each
 * benchmark does and docs/performance.md for the numbers.
 *
 * --quick: 3 s per measurement (after a 4 s warm-up), smaller click seeds; about ten minutes in all on a 2-core VM.
 * --profile: Ferry's servers run with --cpu-prof; a summary of the busiest threads is appended.
 * Env: BENCH_DURATION, BENCH_WARMUP (seconds), BENCH_CONNECTIONS, BENCH_ROUNDS (redirect rounds alternating with
 * the baseline), BENCH_FERRY_ENV (JSON: extra variables for Ferry).
 */
import { execSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { cpuProbeMs, ROOT } from './lib/proc.js';
import { markdown, type Row } from './lib/report.js';
import { finishBaseline, prepareData, SCENARIOS, targetsOf, type BenchContext } from './scenarios.js';

const log = (line: string) => process.stderr.write(`${line}\n`);

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const quick = args.includes('--quick');
  const only = args
    .find((a) => a.startsWith('--only='))
    ?.slice('--only='.length)
    .split(',');
  const stamp = new Date().toISOString().replace(/[:.]/g, '-');
  const resultsDir = path.join(ROOT, 'bench/results');
  mkdirSync(resultsDir, { recursive: true });
  const work = mkdtempSync(path.join(tmpdir(), 'ferry-bench-'));
  const ctx: BenchContext = {
    quick,
    duration: Number(process.env.BENCH_DURATION ?? (quick ? 3 : 10)),
    // At least the schema compilers' warm-up after start (src/plugins/lazy-compilers.ts, about 3 s of CPU in
    // slices), which a 1 s warm-up left inside the API rows' measurement.
    warmup: Number(process.env.BENCH_WARMUP ?? (quick ? 4 : 5)),
    connections: Number(process.env.BENCH_CONNECTIONS ?? 10),
    rounds: Number(process.env.BENCH_ROUNDS ?? (quick ? 2 : 3)),
    work,
    profileDir: args.includes('--profile') ? path.join(resultsDir, `prof-${stamp}`) : null,
    log,
    data: null!,
    baseline: null,
  };
  const started = performance.now();
  const probeMs = cpuProbeMs();
  try {
    log('building Ferry (npm run build) ...');
    execSync('npm run build --silent', { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'] });
    const scenarios = SCENARIOS.filter((s) => (!only && !s.optIn) || only?.includes(s.name));
    ctx.data = await prepareData(ctx, new Set(scenarios.flatMap((s) => s.needs)));
    const rows: Row[] = [];
    const profiles: string[] = [];
    for (const scenario of scenarios) {
      log(`\n== ${scenario.name}: ${scenario.describe(ctx)}`);
      const { row, more = [], profile } = await scenario.run(ctx);
      if (profile) profiles.push(`### ${scenario.name}\n\n${profile}`);
      for (const r of [row, ...more]) {
        rows.push(r);
        log(
          `   ${r.name}: ${Math.round(r.perSecond)} ${r.unit}, p99 ${r.latencyMs?.p99.toFixed(2) ?? '-'} ms, errors ${r.errors}, ${r.notes}`,
        );
      }
    }
    // The scale-out click path against the embedded writer of the same run (bench/ingest-scaleout.ts).
    const embeddedIngest = rows.find((r) => r.name === 'ingest-uniform');
    for (const row of rows)
      if (row.name.startsWith('ingest-pg-') && embeddedIngest && row.perSecond > 0)
        row.baselinePerSecond = embeddedIngest.perSecond;
    const { row: baseline, profile: baselineProfile } = await finishBaseline(ctx);
    for (const row of rows) if (!row.baselinePerSecond) row.runBaselinePerSecond = baseline.perSecond;
    rows.unshift(baseline);
    if (baselineProfile) profiles.unshift(`### baseline\n\n${baselineProfile}`);
    const seconds = (performance.now() - started) / 1000;
    const header = [
      `## Benchmarks (\`npm run bench${quick ? ' -- --quick' : ''}\`, ${new Date().toISOString().slice(0, 16)}Z)`,
      '',
      `${ctx.connections} connections, ${ctx.duration} s measured after ${ctx.warmup} s of warm-up, on one machine (load generator included);`,
      `Node ${process.version}, embedded SQLite, LOG_LEVEL=info. Whole run: ${seconds.toFixed(0)} s. CPU probe (bench/run.ts`,
      `cpuProbeMs, a fixed JavaScript loop, best of 3; lower is a faster machine): ${probeMs.toFixed(0)} ms.`,
    ].join('\n');
    const md =
      markdown(rows, targetsOf(rows), header) +
      (profiles.length ? `\n## CPU profiles (self time)\n\n${profiles.join('\n\n')}\n` : '');
    writeFileSync(path.join(resultsDir, `bench-${stamp}.md`), md);
    writeFileSync(
      path.join(resultsDir, `bench-${stamp}.json`),
      JSON.stringify(
        {
          date: new Date().toISOString(),
          quick,
          cpuProbeMs: probeMs,
          duration: ctx.duration,
          warmup: ctx.warmup,
          connections: ctx.connections,
          node: process.version,
          rows,
        },
        null,
        2,
      ),
    );
    copyFileSync(path.join(resultsDir, `bench-${stamp}.md`), path.join(ROOT, 'bench/LATEST.md'));
    process.stdout.write(`\n${md}`);
    log(`\nwritten: bench/results/bench-${stamp}.{md,json} and bench/LATEST.md (${seconds.toFixed(0)} s)`);
  } finally {
    if (ctx.baseline?.server.child.exitCode === null) ctx.baseline.server.child.kill('SIGKILL');
    rmSync(work, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  log(`bench failed: ${err instanceof Error ? err.stack : String(err)}`);
  process.exit(1);
});
