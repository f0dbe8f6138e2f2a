import { performance } from 'node:perf_hooks';
import { describe, expect, it } from 'vitest';
import { engines } from '../../helpers/app.js';
import { useTestApp, useUser } from '../../helpers/fixtures.js';
import { createUser } from '../../helpers/factories.js';
import { createPasswordHasher } from '../../../src/modules/users/password.js';

const TRIES = 15;
const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

/**
 * SPEC §4: wrong credentials answer in about the same time whether or not the user exists. Without the
 * decoy hash a missing user answers in well under a millisecond while a wrong password costs one scrypt
 * (tens of milliseconds), a ratio far outside 0.5–2.
 */
describe.each(engines)('login timing on %s', (engine) => {
  // The production hash cost (the test default is cheaper), so that the hash dominates as it does in service.
  const t = useTestApp(engine, { env: { PASSWORD_HASH_COST: '15' } });
  const u = useUser(t);

  async function timeLogin(username: string): Promise<number> {
    const start = performance.now();
    const res = await t.request({
      method: 'POST',
      url: '/api/v1/tokens',
      payload: { username, password: 'wrong-password-here' },
    });
    const ms = performance.now() - start;
    expect(res.status).toBe(401);
    return ms;
  }

  it('when logging in with a wrong password and with an unknown username, interleaved, then the medians are within a factor of 2', async () => {
    // Warm both paths first (the decoy hash is made on first use; JIT, pool connections).
    await timeLogin(u.username);
    await timeLogin('nobody-by-this-name');
    const existing: number[] = [];
    const missing: number[] = [];
    for (let i = 0; i < TRIES; i++) {
      existing.push(await timeLogin(u.username));
      missing.push(await timeLogin(`ghost_${i}_${Math.random().toString(36).slice(2, 8)}`));
    }
    const ratio = median(missing) / median(existing);
    expect(median(existing)).toBeGreaterThan(5); // a real slow hash was run
    expect(
      ratio,
      `median existing ${median(existing).toFixed(1)} ms, missing ${median(missing).toFixed(1)} ms`,
    ).toBeGreaterThan(0.5);
    expect(ratio).toBeLessThan(2);
  });

  it("when a user's hash has an older cost (PASSWORD_HASH_COST was raised), then a wrong password takes about as long as an unknown user", async () => {
    const old = await createUser(t);
    const cheap = await createPasswordHasher(12).hash('some-old-password');
    await t.storage.db.updateTable('users').set({ password_hash: cheap }).where('id', '=', old.id).execute();
    await timeLogin(old.username);
    const outdated: number[] = [];
    const missing: number[] = [];
    for (let i = 0; i < TRIES; i++) {
      outdated.push(await timeLogin(old.username));
      missing.push(await timeLogin(`ghost_old_${i}_${Math.random().toString(36).slice(2, 8)}`));
    }
    const ratio = median(missing) / median(outdated);
    expect(
      ratio,
      `median outdated ${median(outdated).toFixed(1)} ms, missing ${median(missing).toFixed(1)} ms`,
    ).toBeGreaterThan(0.5);
    expect(ratio).toBeLessThan(2);
  });
});
