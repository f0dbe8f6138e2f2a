import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    // web/test: the dashboard's own logic (router, URL state, errors, session), type-checked with web/.
    include: ['test/**/*.test.ts', 'web/test/**/*.test.ts'],
    // The JSON report lets .ci/run print one plain "N passed, N failed" line; the skip reporter prints one line
    // per test file that skipped anything, naming why (test/helpers/skip.ts).
    reporters: ['default', 'json', './test/helpers/skip-reporter.ts'],
    outputFile: { json: 'test-results/vitest.json' },
    globalSetup: ['test/helpers/global-setup.ts'],
    setupFiles: ['test/helpers/no-network.ts'],
    // Generous for the 2-core CI machine, where a test that starts processes can wait on a loaded CPU.
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
    maxWorkers: 2,
  },
});
