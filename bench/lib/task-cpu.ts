import { readdirSync, readFileSync } from 'node:fs';

/**
 * CPU seconds of each thread of this process so far (Linux: /proc/self/task, user + system, in clock ticks of
 * 10 ms): lets bench/ingest.ts tell the click writer thread's CPU from the producer's and the garbage
 * collector's helpers. Empty elsewhere.
 */
export function threadCpuSeconds(): Map<number, number> {
  const out = new Map<number, number>();
  let tids: string[];
  try {
    tids = readdirSync('/proc/self/task');
  } catch {
    return out;
  }
  for (const tid of tids) {
    try {
      const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      out.set(Number(tid), (Number(fields[11]) + Number(fields[12])) / 100);
    } catch {
      // the thread ended meanwhile
    }
  }
  return out;
}
