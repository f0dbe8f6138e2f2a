import { describe, expect, it } from 'vitest';
import { engines } from '../../helpers/app.js';
import { useTestApp } from '../../helpers/fixtures.js';
import { expectEnvelope } from '../../helpers/expect-envelope.js';
import { createUser, login, type CreatedUser } from '../../helpers/factories.js';

/** SPEC §17: the last active admin cannot be demoted, suspended or deleted (409 LAST_ADMIN), races included. */
describe.each(engines)('the last active admin on %s', (engine) => {
  const t = useTestApp(engine);

  const activeAdmins = async () =>
    (
      await t.storage.db
        .selectFrom('users')
        .select('id')
        .where('role', '=', 'admin')
        .where('status', '=', 'active')
        .execute()
    ).map((r) => r.id);
  const patch = (who: CreatedUser, id: number | 'me', payload: object) =>
    t.request({ method: 'PATCH', url: `/api/v1/users/${id}`, token: who.token, payload });
  /** Leaves `keep` the only active admin (earlier tests' admins become users). */
  const onlyAdmin = async (keep: CreatedUser) => {
    await t.storage.db
      .updateTable('users')
      .set({ role: 'user' })
      .where('role', '=', 'admin')
      .where('id', '!=', keep.id)
      .execute();
    expect(await activeAdmins()).toEqual([keep.id]);
  };

  it('when the only active admin demotes, suspends or deletes themself, then 409 LAST_ADMIN and nothing changes', async () => {
    const admin = await createUser(t, { role: 'admin', status: 'active' });
    await onlyAdmin(admin);
    expect(expectEnvelope(await patch(admin, 'me', { role: 'user' }), 409, 'LAST_ADMIN')).toEqual(['role']);
    expect(expectEnvelope(await patch(admin, admin.id, { status: 'suspended' }), 409, 'LAST_ADMIN')).toEqual([
      'status',
    ]);
    expect(expectEnvelope(await patch(admin, admin.id, { status: 'pending' }), 409, 'LAST_ADMIN')).toEqual(['status']);
    const me = (await t.request({ url: '/api/v1/users/me', token: admin.token })).body;
    expect(
      expectEnvelope(
        await t.request({
          method: 'PUT',
          url: '/api/v1/users/me',
          token: admin.token,
          payload: { username: me.username, email: me.email, role: 'user' },
        }),
        409,
        'LAST_ADMIN',
      ),
    ).toEqual(['role']);
    expectEnvelope(
      await t.request({ method: 'DELETE', url: `/api/v1/users/${admin.id}`, token: admin.token }),
      409,
      'LAST_ADMIN',
    );
    expect(await activeAdmins()).toEqual([admin.id]);
    // A change that keeps them an active admin is fine.
    expect((await patch(admin, 'me', { name: 'Still admin', role: 'admin', status: 'active' })).status).toBe(200);
  });

  it('when another active admin exists, then an admin may be demoted or deleted; a pending or suspended admin does not count', async () => {
    const first = await createUser(t, { role: 'admin', status: 'active' });
    await onlyAdmin(first);
    const pending = await createUser(t);
    await t.storage.db
      .updateTable('users')
      .set({ role: 'admin', status: 'pending' })
      .where('id', '=', pending.id)
      .execute();
    expectEnvelope(await patch(first, 'me', { role: 'user' }), 409, 'LAST_ADMIN');
    const second = await createUser(t, { role: 'admin', status: 'active' });
    expect((await patch(first, second.id, { status: 'suspended' })).status).toBe(200);
    expectEnvelope(
      await t.request({ method: 'DELETE', url: `/api/v1/users/${first.id}`, token: first.token }),
      409,
      'LAST_ADMIN',
    );
    expect((await patch(first, second.id, { status: 'active' })).status).toBe(200);
    expect((await t.request({ method: 'DELETE', url: `/api/v1/users/${first.id}`, token: first.token })).status).toBe(
      204,
    );
    expect(await activeAdmins()).toEqual([second.id]);
  });

  it('when the two active admins demote, suspend or delete each other at the same moment, then exactly one succeeds and one active admin remains, every time', async () => {
    let survivor = await createUser(t, { role: 'admin', status: 'active' });
    await onlyAdmin(survivor);
    const moves = [
      (by: CreatedUser, other: CreatedUser) => patch(by, other.id, { role: 'user' }),
      (by: CreatedUser, other: CreatedUser) => patch(by, other.id, { status: 'suspended' }),
      (by: CreatedUser, other: CreatedUser) =>
        t.request({ method: 'DELETE', url: `/api/v1/users/${other.id}`, token: by.token }),
    ];
    let guarded = 0;
    for (let round = 0; round < 6; round += 1) {
      const newcomer = await createUser(t, { role: 'admin', status: 'active' });
      const [a, b] = await Promise.all([
        moves[round % 3]!(survivor, newcomer),
        moves[(round + 1) % 3]!(newcomer, survivor),
      ]);
      // The loser is refused by the guard (409 LAST_ADMIN), or, when the winner's change landed before its
      // credential was checked, by that change (401 suspended or deleted, 403 no longer an admin).
      expect(
        [a, b].filter((r) => r.status === 200 || r.status === 204),
        `round ${round}`,
      ).toHaveLength(1);
      const loser = [a, b].find((r) => r.status !== 200 && r.status !== 204)!;
      expect(['LAST_ADMIN', 'UNAUTHENTICATED', 'FORBIDDEN', 'NOT_FOUND'], `round ${round}`).toContain(
        loser.body.error.code,
      );
      guarded += loser.body.error.code === 'LAST_ADMIN' ? 1 : 0;
      const admins = await activeAdmins();
      expect(admins, `round ${round}`).toHaveLength(1);
      const kept = admins[0] === survivor.id ? survivor : newcomer;
      survivor = { ...kept, token: await login(t, kept.username, kept.password) };
    }
    expect(guarded).toBeGreaterThan(0);
  });
});
