import { describe, expect, it } from 'vitest';
import { engines } from '../../helpers/app.js';
import { useUser } from '../../helpers/fixtures.js';
import { createUser, HUMAN_UA } from '../../helpers/factories.js';
import { DOMAINS, uniqueHost, type CreatedDomain, useDomainTestApp } from './domains.helpers.js';

const LINKS = '/api/v1/links';

/** SPEC §25 "Nobody can squat a domain". */
describe.each(engines)('claims of a host name on %s', (engine) => {
  const d = useDomainTestApp(engine);
  const admin = useUser(d, { role: 'admin', status: 'active' });

  const claim = (token: string, hostname: string) =>
    d.t.request({ method: 'POST', url: DOMAINS, token, payload: { hostname } });
  const link = async (token: string, payload: Record<string, unknown>) => {
    const res = await d.t.request({
      method: 'POST',
      url: LINKS,
      token,
      payload: { original_url: 'https://example.com/x', ...payload },
    });
    expect(res.status, res.text).toBe(201);
    return res.body as { id: number; short_code: string; domain: string };
  };
  const codesOf = (res: { body: { data: Array<{ short_code: string }> } }) =>
    res.body.data.map((l) => l.short_code).sort();

  it('when two users claim the same unverified name, then each gets a claim and token of their own, and their links use it', async () => {
    const [alice, bob] = [await createUser(d.t, { status: 'active' }), await createUser(d.t, { status: 'active' })];
    const hostname = uniqueHost();
    const a = await claim(alice.token, hostname);
    const b = await claim(bob.token, hostname.toUpperCase());
    expect([a.status, b.status], b.text).toEqual([201, 201]);
    expect(b.body).toMatchObject({ hostname, owner_id: bob.id, verified_at: null });
    expect(b.body.verification.txt_value).not.toBe(a.body.verification.txt_value);
    // The same code on each claim: two namespaces, each user's own.
    await link(alice.token, { short_code: 'same', domain: hostname, original_url: 'https://example.com/alice' });
    await link(bob.token, { short_code: 'same', domain: hostname, original_url: 'https://example.com/bob' });
    const read = (token: string) => d.t.request({ url: `${LINKS}/same?domain=${hostname}`, token });
    expect((await read(bob.token)).body.original_url).toBe('https://example.com/bob');
    expect((await read(alice.token)).body.original_url).toBe('https://example.com/alice');
    expect(codesOf(await d.t.request({ url: `/api/v1/users/me/links?domain=${hostname}`, token: bob.token }))).toEqual([
      'same',
    ]);
    expect(
      (await d.t.request({ url: `/api/v1/users/me/stats?domain=${hostname}`, token: bob.token })).body,
    ).toMatchObject({ links: 1 });
    // A third user sees no domain of that name at all.
    const carol = await createUser(d.t, { status: 'active' });
    const payload = { original_url: 'https://example.com/c', domain: hostname };
    const refused = await d.t.request({ method: 'POST', url: LINKS, token: carol.token, payload });
    expect(refused.status).toBe(400);
    expect(refused.body.error.details[0].field).toBe('domain');
  });

  it('when the same user claims a name twice (in any case), then 409 CONFLICT', async () => {
    const owner = await createUser(d.t, { status: 'active' });
    const hostname = uniqueHost();
    expect((await claim(owner.token, hostname)).status).toBe(201);
    const again = await claim(owner.token, `${hostname.toUpperCase()}.`);
    expect(again.status).toBe(409);
    expect(again.body.error).toMatchObject({ code: 'CONFLICT', details: [{ field: 'hostname' }] });
  });

  it('when one claim is verified, then it owns the name: the other claims and their links go, and no one claims it again', async () => {
    const [squatter, owner] = [
      await createUser(d.t, { status: 'active' }),
      await createUser(d.t, { status: 'active' }),
    ];
    const hostname = uniqueHost();
    const early = await claim(squatter.token, hostname);
    expect(early.status).toBe(201);
    const squatted = await link(squatter.token, {
      short_code: 'promo',
      domain: hostname,
      original_url: 'https://evil.example/',
    });
    const mine = (await claim(owner.token, hostname)).body as CreatedDomain;
    d.dns.txt.set(mine.verification.txt_name, [mine.verification.txt_value]);
    const verified = await d.t.request({ method: 'POST', url: `${DOMAINS}/${mine.id}/verify`, token: owner.token });
    expect(verified.status, verified.text).toBe(200);

    expect((await d.t.request({ url: `${DOMAINS}/${early.body.id}`, token: squatter.token })).status).toBe(404);
    expect((await d.t.request({ url: `${LINKS}?user_id=${squatter.id}`, token: admin.token })).body.data).toEqual([]);
    // The losing claim's code was never served, so it is not retired: the owner may use it.
    const real = await link(owner.token, {
      short_code: squatted.short_code,
      domain: hostname,
      original_url: 'https://example.com/real',
    });
    expect(real.domain).toBe(hostname);
    const visit = await d.t.request({
      url: `/${squatted.short_code}`,
      headers: { host: hostname, 'user-agent': HUMAN_UA },
    });
    expect(visit.headers.location).toBe('https://example.com/real');

    for (const who of [squatter, admin]) {
      const res = await claim(who.token, hostname.toUpperCase());
      expect(res.status, res.text).toBe(409);
      expect(res.body.error.code).toBe('CONFLICT');
    }
    // The squatter's own token, verified later, proves nothing: the claim is gone.
    d.dns.txt.set(early.body.verification.txt_name, [early.body.verification.txt_value]);
    expect(
      (await d.t.request({ method: 'POST', url: `${DOMAINS}/${early.body.id}/verify`, token: squatter.token })).status,
    ).toBe(404);
  });

  it('when an admin hands a claim to a user who claimed the same name, then 409 CONFLICT naming owner_id', async () => {
    const [one, two] = [await createUser(d.t, { status: 'active' }), await createUser(d.t, { status: 'active' })];
    const hostname = uniqueHost();
    const first = (await claim(one.token, hostname)).body as CreatedDomain;
    expect((await claim(two.token, hostname)).status).toBe(201);
    const res = await d.t.request({
      method: 'PATCH',
      url: `${DOMAINS}/${first.id}`,
      token: admin.token,
      payload: { owner_id: two.id },
    });
    expect(res.status, res.text).toBe(409);
    expect(res.body.error.details[0].field).toBe('owner_id');
  });
});
