import { describe, expect, it, vi } from 'vitest';
import type { HashLanes } from '../../../src/infra/hash-lanes.js';
import { engines } from '../../helpers/app.js';
import { useTestApp } from '../../helpers/fixtures.js';
import { expectEnvelope } from '../../helpers/expect-envelope.js';
import { createUser } from '../../helpers/factories.js';
import { codeAt, enableTotp, signIn, STEP_MS } from './two-factor.helpers.js';

const actionsOf = async (t: ReturnType<typeof useTestApp>, userId: number) =>
  (
    await t.storage.db
      .selectFrom('audit_log')
      .select(['action', 'details', 'actor_id', 'ip'])
      .where('target_type', '=', 'user')
      .where('target_id', '=', String(userId))
      .orderBy('id')
      .execute()
  ).map((r) => ({ ...r, details: r.details === null ? null : JSON.parse(r.details) }));

/** SPEC §23: POST /api/v1/tokens of an account with two-factor sign-in on. */
describe.each(engines)('sign-in with two factors on %s', (engine) => {
  const t = useTestApp(engine);

  it('when no totp_code is sent, then 401 TOTP_REQUIRED; with the current code, 201', async () => {
    const u = await createUser(t);
    const { secret } = await enableTotp(t, u);
    expectEnvelope(await signIn(t, u), 401, 'TOTP_REQUIRED');
    const res = await signIn(t, u, codeAt(secret, t.clock.now()));
    expect(res.status).toBe(201);
    const entries = await actionsOf(t, u.id);
    expect(entries.at(-1)).toMatchObject({
      action: 'auth.sign_in',
      actor_id: u.id,
      details: { method: 'password', second_factor: 'totp' },
    });
  });

  it('when the password is wrong, then 401 UNAUTHENTICATED whatever the code (the code is not even looked at)', async () => {
    const u = await createUser(t);
    const { secret } = await enableTotp(t, u);
    const res = await signIn(t, { ...u, password: 'wrong-password' }, codeAt(secret, t.clock.now()));
    expectEnvelope(res, 401, 'UNAUTHENTICATED');
    // The code was not used up by a sign-in whose password was wrong.
    expect((await signIn(t, u, codeAt(secret, t.clock.now()))).status).toBe(201);
  });

  it('when the code is wrong, then 401 INVALID_CREDENTIALS and a failed sign-in in the audit log', async () => {
    const u = await createUser(t);
    const { secret } = await enableTotp(t, u);
    const wrong = String((Number(codeAt(secret, t.clock.now())) + 1) % 1_000_000).padStart(6, '0');
    expectEnvelope(await signIn(t, u, wrong), 401, 'INVALID_CREDENTIALS');
    expect((await actionsOf(t, u.id)).at(-1)).toMatchObject({
      action: 'auth.sign_in_failed',
      actor_id: null,
      ip: '127.0.0.1',
      details: { method: 'password', reason: 'totp' },
    });
  });

  it('when the code of the previous or next step is sent, then it is accepted (one step either side); two away, not', async () => {
    const u = await createUser(t);
    const { secret } = await enableTotp(t, u);
    t.clock.advance(5 * STEP_MS);
    expect((await signIn(t, u, codeAt(secret, t.clock.now() - STEP_MS))).status).toBe(201);
    expectEnvelope(await signIn(t, u, codeAt(secret, t.clock.now() + 2 * STEP_MS)), 401, 'INVALID_CREDENTIALS');
    expect((await signIn(t, u, codeAt(secret, t.clock.now() + STEP_MS))).status).toBe(201);
    t.clock.advance(STEP_MS);
  });

  it('when a code is used again within its window, then 401 INVALID_CREDENTIALS (a replay)', async () => {
    const u = await createUser(t);
    const { secret } = await enableTotp(t, u);
    const code = codeAt(secret, t.clock.now());
    expect((await signIn(t, u, code)).status).toBe(201);
    t.clock.advance(10_000); // same window
    expectEnvelope(await signIn(t, u, code), 401, 'INVALID_CREDENTIALS');
    // An earlier step's code after a later one was used: refused too.
    t.clock.advance(STEP_MS);
    expect((await signIn(t, u, codeAt(secret, t.clock.now()))).status).toBe(201);
    expectEnvelope(await signIn(t, u, codeAt(secret, t.clock.now() - STEP_MS)), 401, 'INVALID_CREDENTIALS');
  });

  it('when two sign-ins race with the same code, then exactly one gets a token', async () => {
    const u = await createUser(t);
    const { secret } = await enableTotp(t, u);
    const code = codeAt(secret, t.clock.now());
    const answers = await Promise.all(Array.from({ length: 4 }, () => signIn(t, u, code)));
    expect(answers.map((a) => a.status).sort()).toEqual([201, 401, 401, 401]);
    for (const a of answers.filter((x) => x.status === 401)) expectEnvelope(a, 401, 'INVALID_CREDENTIALS');
  });

  it('when a recovery code is sent as totp_code, then it signs in once; the second time 401', async () => {
    const u = await createUser(t);
    const { recoveryCodes } = await enableTotp(t, u);
    const code = recoveryCodes[0]!;
    const first = await signIn(t, u, code.replace(/-/g, ''));
    expect(first.status).toBe(201);
    expect((await actionsOf(t, u.id)).at(-1)?.details).toMatchObject({ second_factor: 'recovery_code' });
    expectEnvelope(await signIn(t, u, code), 401, 'INVALID_CREDENTIALS');
    const [a, b] = await Promise.all([signIn(t, u, recoveryCodes[1]!), signIn(t, u, recoveryCodes[1]!)]);
    expect([a.status, b.status].sort()).toEqual([201, 401]);
    expect((await signIn(t, u, recoveryCodes[2]!)).status).toBe(201);
  });

  it('when a user with two-factor signs in, then every attempt costs one password hash, whatever the code (SPEC §17)', async () => {
    const u = await createUser(t);
    const { secret, recoveryCodes } = await enableTotp(t, u);
    const right = codeAt(secret, t.clock.now());
    const wrong = String((Number(right) + 1) % 1_000_000).padStart(6, '0');
    const attempts: Array<[string, () => ReturnType<typeof signIn>, number]> = [
      ['no code', () => signIn(t, u), 401],
      ['a wrong code', () => signIn(t, u, wrong), 401],
      ['the right code', () => signIn(t, u, right), 201],
      ['a recovery code', () => signIn(t, u, recoveryCodes[0]!), 201],
      ['a wrong password', () => signIn(t, { ...u, password: 'wrong-password' }, right), 401],
    ];
    // Every hash of a sign-in goes through the address's hashing lanes (infra/hash-lanes.ts): one schedule, one scrypt.
    const hashes = vi.spyOn(t.app.passwordHashing as HashLanes, 'schedule');
    try {
      for (const [what, attempt, status] of attempts) {
        hashes.mockClear();
        expect((await attempt()).status, what).toBe(status);
        expect(hashes, what).toHaveBeenCalledTimes(1);
      }
    } finally {
      hashes.mockRestore();
    }
  });

  it('when a user has no two-factor, then totp_code is ignored and the sign-in is audited with its method', async () => {
    const u = await createUser(t);
    expect((await signIn(t, u, '123456')).status).toBe(201);
    expect((await actionsOf(t, u.id)).at(-1)).toMatchObject({
      action: 'auth.sign_in',
      details: { method: 'password', second_factor: null },
    });
  });

  it('when the password is wrong or the name unknown, then a failed sign-in is recorded (no name for an unknown one)', async () => {
    const u = await createUser(t);
    await signIn(t, { ...u, password: 'wrong-password' });
    expect((await actionsOf(t, u.id)).at(-1)).toMatchObject({
      action: 'auth.sign_in_failed',
      details: { reason: 'password' },
    });
    const before = await t.storage.db
      .selectFrom('audit_log')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('action', '=', 'auth.sign_in_failed')
      .where('target_id', 'is', null)
      .executeTakeFirstOrThrow();
    await signIn(t, { username: 'nobody-by-this-name', password: 'whatever-pass' });
    const after = await t.storage.db
      .selectFrom('audit_log')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('action', '=', 'auth.sign_in_failed')
      .where('target_id', 'is', null)
      .executeTakeFirstOrThrow();
    expect(Number(after.n)).toBe(Number(before.n) + 1);
  });
});

/** A wrong code counts against the sign-in attempt limiter (tokens-username, tokens-ip) as a wrong password does. */
describe.each(engines)('two-factor sign-in and the attempt limiter on %s', (engine) => {
  const t = useTestApp(engine, { env: { TOKEN_RATE_LIMIT_PER_MINUTE: '4' } });

  it('when wrong codes use up the limit, then even the right code is 429', async () => {
    const u = await createUser(t); // one sign-in
    const { secret } = await enableTotp(t, u);
    const wrong = String((Number(codeAt(secret, t.clock.now())) + 1) % 1_000_000).padStart(6, '0');
    expectEnvelope(await signIn(t, u, wrong), 401, 'INVALID_CREDENTIALS');
    expectEnvelope(await signIn(t, u, wrong), 401, 'INVALID_CREDENTIALS');
    expectEnvelope(await signIn(t, u, wrong), 401, 'INVALID_CREDENTIALS');
    expectEnvelope(await signIn(t, u, codeAt(secret, t.clock.now())), 429, 'RATE_LIMITED');
  });
});

/** PASSWORD_LOGIN=false (SPEC §23). */
describe.each(engines)('password sign-in switched off on %s', (engine) => {
  const t = useTestApp(engine, { env: { PASSWORD_LOGIN: 'false' } });

  it('when a username and password are sent, then 403 PASSWORD_LOGIN_DISABLED, right or wrong', async () => {
    const created = await t.request({
      method: 'POST',
      url: '/api/v1/users',
      payload: { username: 'pl_user', email: 'pl_user@example.com', password: 'correct-horse-battery' },
    });
    expect(created.status).toBe(201);
    const right = await signIn(t, { username: 'pl_user', password: 'correct-horse-battery' });
    expectEnvelope(right, 403, 'PASSWORD_LOGIN_DISABLED');
    expectEnvelope(
      await signIn(t, { username: 'pl_user', password: 'wrong-password' }),
      403,
      'PASSWORD_LOGIN_DISABLED',
    );
    expectEnvelope(await signIn(t, { username: 'nobody', password: 'wrong-password' }), 403, 'PASSWORD_LOGIN_DISABLED');
  });
});
