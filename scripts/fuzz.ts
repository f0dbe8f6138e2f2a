/**
 * `npm run fuzz -- --count=N [--seed=S]`: the API fuzz test (test/fuzz/api-fuzz.test.ts) with N generated
 * requests instead of the 2,000 that `npm test` sends. Uses TEST_DATABASE_URL / TEST_REDIS_URL like npm test.
 */
import { spawnSync } from 'node:child_process';

const arg = (name: string): string | undefined => process.argv.slice(2).find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const count = arg('count') ?? '20000';
if (!/^\d+$/.test(count)) {
  process.stderr.write('usage: npm run fuzz -- --count=N [--seed=S]\n');
  process.exit(2);
}
const seed = arg('seed');
const result = spawnSync('npx', ['vitest', 'run', 'test/fuzz/api-fuzz.test.ts'], {
  stdio: 'inherit',
  env: { ...process.env, FUZZ_COUNT: count, ...(seed ? { FUZZ_SEED: seed } : {}) },
});
process.exit(result.status ?? 1);
