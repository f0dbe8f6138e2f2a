import { defineConfig } from 'vitest/config';
import LongestFirst from './test/helpers/sequencer.js';

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
    // A worker process runs its test files one after another in one module graph: loading Fastify, Ajv, Kysely
    // and the app's sources once per worker instead of once per file was most of the suite's time. Each test
    // still builds its own app, database and Redis prefix (test/helpers/app.ts), so files share no state.
    isolate: false,
    // Longest files first, also on a clean clone (test/helpers/sequencer.ts).
    sequence: { sequencer: LongestFirst },
  },
});
