import { relative } from 'node:path';
import type { Reporter, TestModule } from 'vitest/node';
import { SKIP_MARK } from './skip.js';

/**
 * One line per test file in which tests were skipped, naming why: the reason each skipping suite carries in
 * its name (test/helpers/skip.ts), or "no reason given" for a skip that does not say (which a review should
 * then fix). Printed after the run's summary.
 */
export default class SkipReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    const lines: string[] = [];
    for (const mod of testModules) {
      const skipped = [...mod.children.allTests()].filter((t) => t.result().state === 'skipped');
      if (skipped.length === 0) continue;
      const reasons = new Set<string>();
      for (const t of skipped) {
        const at = t.fullName.indexOf(SKIP_MARK);
        reasons.add(
          at === -1 ? 'no reason given' : t.fullName.slice(at + SKIP_MARK.length, t.fullName.indexOf(']', at)),
        );
      }
      lines.push(
        `SKIP ${relative(process.cwd(), mod.moduleId)}: ${skipped.length} test(s): ${[...reasons].join('; ')}`,
      );
    }
    if (lines.length > 0) process.stdout.write(`\n${lines.join('\n')}\n`);
  }
}
