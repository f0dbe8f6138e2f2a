/**
 * tsx bench/profile-summary.ts <file.cpuprofile> [top=25] — self time per function of a V8 CPU profile
 * (node --cpu-prof), the biggest first, with the share of all samples (idle excluded).
 *
 * Given the measured runs' windows (µs of the monotonic clock, bench/load.ts `window`), only the samples
 * taken inside them count — the steady state, without start-up, warm-up and shutdown — and, given the number
 * of requests answered in them, each function's self time per request.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

export interface Steady {
  /** [from, to] in µs of the monotonic clock */
  windows: [number, number][];
  /** requests answered inside the windows */
  requests: number;
}

export function summarize(file: string, top = 25, steady?: Steady): { text: string; busyMs: number } {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map<number, number>();
  const inside = (t: number) => steady === undefined || steady.windows.some(([from, to]) => t >= from && t < to);
  // Time per sample: the delta to the next sample (µs); a sample's time is the start plus the deltas so far.
  let t = profile.startTime;
  profile.samples.forEach((id, i) => {
    t += profile.timeDeltas[i] ?? 0;
    if (!inside(t)) return;
    const dt = profile.timeDeltas[i + 1] ?? 0;
    self.set(id, (self.get(id) ?? 0) + dt);
  });
  const perFunction = new Map<string, number>();
  let busy = 0;
  let idle = 0;
  for (const [id, us] of self) {
    const frame = byId.get(id)!.callFrame;
    if (frame.functionName === '(idle)') {
      idle += us;
      continue;
    }
    busy += us;
    const where = frame.url ? `${shorten(frame.url)}:${frame.lineNumber + 1}` : '';
    const key = `${frame.functionName || '(anonymous)'} ${where}`.trim();
    perFunction.set(key, (perFunction.get(key) ?? 0) + us);
  }
  const perRequest = steady && steady.requests > 0 ? steady.requests : null;
  const scope = steady
    ? ` in the measured runs${perRequest ? ` (${perRequest} requests: ${(busy / perRequest).toFixed(1)} µs busy per request)` : ''}`
    : '';
  const lines = [
    `${path.basename(file)}: busy ${(busy / 1e6).toFixed(2)} s, idle ${(idle / 1e6).toFixed(2)} s${scope}`,
    `| self % | self ms |${perRequest ? ' µs/req |' : ''} function |`,
    `|---:|---:|${perRequest ? '---:|' : ''}---|`,
  ];
  for (const [key, us] of [...perFunction].sort((a, b) => b[1] - a[1]).slice(0, top)) {
    lines.push(
      `| ${((100 * us) / busy).toFixed(1)} | ${(us / 1000).toFixed(0)} |${perRequest ? ` ${(us / perRequest).toFixed(2)} |` : ''} ${key.replace(/\|/g, '\\|')} |`,
    );
  }
  return { text: lines.join('\n'), busyMs: busy / 1000 };
}

function shorten(url: string): string {
  const u = url.replace(/^file:\/\//, '');
  const nm = u.lastIndexOf('node_modules/');
  if (nm >= 0) return u.slice(nm + 'node_modules/'.length);
  const src = u.search(/\/(dist\/)?(src|bench)\//);
  return src >= 0 ? u.slice(src + 1) : u;
}

if (process.argv[1] && import.meta.url.endsWith(path.basename(process.argv[1]))) {
  process.stdout.write(`${summarize(process.argv[2]!, Number(process.argv[3] ?? 25)).text}\n`);
}
