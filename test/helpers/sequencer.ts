import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/** test/durations.json: each test file's time in the last CI run on Node 20, in milliseconds (scripts/test-durations.mjs). */
const COMMITTED = path.resolve(import.meta.dirname, '../durations.json');

function committedDurations(): Record<string, number> {
  return existsSync(COMMITTED) ? (JSON.parse(readFileSync(COMMITTED, 'utf8')) as Record<string, number>) : {};
}

/**
 * The suite's files, longest first, so that no long file starts last and keeps one worker busy alone at the end
 * (two workers: a three-minute file started last makes the run up to three minutes longer). Vitest orders by the
 * durations it remembers from earlier runs on this machine (node_modules/.vite/vitest); a clean clone, which is
 * what CI runs, has none, and Vitest's fallback is file size. The durations of the last CI run are committed
 * instead. A file neither knows runs first, as Vitest runs unknown files first.
 */
export default class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const committed = committedDurations();
    const root = this.ctx.config.root;
    const duration = (spec: TestSpecification): number => {
      const file = path.relative(root, spec.moduleId).split(path.sep).join('/');
      const remembered = this.ctx.cache.getFileTestResults(`${spec.project.name}:${file}`)?.duration;
      return remembered ?? committed[file] ?? Number.POSITIVE_INFINITY;
    };
    const known = new Map(files.map((spec) => [spec, duration(spec)]));
    return [...files].sort((a, b) => known.get(b)! - known.get(a)!);
  }
}
