/**
 * `npm run fuzz -- [--count=N] [--imports=N] [--seed=S]`: the fuzz tests with more cases than `npm test` runs —
 * the API fuzz (test/fuzz/api-fuzz.test.ts: N generated requests, 20,000 by default instead of 2,000) and the
 * import fuzz (test/fuzz/import-fuzz.test.ts: N hostile rows per source, 10,000 by default instead of 500).
 * Uses TEST_DATABASE_URL / TEST_REDIS_URL like npm test.
 */
import { spawnSync } from 'node:child_process';

const arg = (name: string): string | undefined =>
  process.argv
    .slice(2)
    .find((a) => a.startsWith(`--${name}=`))
    ?.slice(name.length + 3);
const count = arg('count') ?? '20000';
const imports = arg('imports') ?? '10000';
if (!/^\d+$/.test(count) || !/^\d+$/.test(imports)) {
  process.stderr.write('usage: npm run fuzz -- [--count=N] [--imports=N] [--seed=S]\n');
  process.exit(2);
}
const seed = arg('seed');
const result = spawnSync('npx', ['vitest', 'run', 'test/fuzz/api-fuzz.test.ts', 'test/fuzz/import-fuzz.test.ts'], {
  stdio: 'inherit',
  env: { ...process.env, FUZZ_COUNT: count, IMPORT_FUZZ_ROWS: imports, ...(seed ? { FUZZ_SEED: seed } : {}) },
});
process.exit(result.status ?? 1);
