import { describe, expect, it } from 'vitest';
import { engines } from '../../helpers/app.js';
import { useUser } from '../../helpers/fixtures.js';
import { createUser } from '../../helpers/factories.js';
import { addDomain, DOMAINS, uniqueHost, verifiedDomain, useDomainTestApp } from './domains.helpers.js';

const LINKS = '/api/v1/links';

/** SPEC §25 "Small holes closed", for domains. */
describe.each(engines)('small holes around domains on %s', (engine) => {
  const d = useDomainTestApp(engine);
  const admin = useUser(d, { role: 'admin', status: 'active' });

  const createLink = (token: string, payload: Record<string, unknown>) =>
    d.t.request({
      method: 'POST',
      url: LINKS,
      token,
      payload: { original_url: 'https://example.com/new', ...payload },
    });

  it('when the TLS ask names anything but a bare host name, then 400; the bare name (any case, a trailing dot) 200', async () => {
    const owner = await createUser(d.t, { status: 'active' });
    const { hostname } = await verifiedDomain(d, owner.token);
    const bad = [
      `${hostname}:evil`,
      `${hostname}:443`,
      `${hostname}/x`,
      `${hostname}%20`,
      `user@${hostname}`,
      `${hostname}%3Fx`,
    ];
    bad.push(`${hostname}_`, `[${hostname}]`);
    for (const asked of bad) {
      const res = await d.t.request({ url: `/internal/tls/allowed?domain=${asked}` });
      expect(res.status, asked).toBe(400);
      expect(res.body.error.code).toBe('VALIDATION_ERROR');
    }
    for (const asked of [hostname, hostname.toUpperCase(), `${hostname}.`]) {
      const res = await d.t.request({ url: `/internal/tls/allowed?domain=${asked}` });
      expect(res.status, asked).toBe(200);
      expect(res.body).toEqual({ domain: hostname, allowed: true });
    }
  });

  it('when an API key limited to domains adds a domain, then 403; an unlimited key of the same user may', async () => {
    const owner = await createUser(d.t, { status: 'active' });
    const mine = await addDomain(d.t, owner.token);
    const keyOf = async (domains?: number[]) => {
      const payload = { name: 'k', scopes: ['links:read', 'links:write'], ...(domains ? { domains } : {}) };
      const res = await d.t.request({
        method: 'POST',
        url: `/api/v1/users/${owner.id}/api-keys`,
        token: owner.token,
        payload,
      });
      expect(res.status, res.text).toBe(201);
      return res.body.key as string;
    };
    const limited = await d.t.request({
      method: 'POST',
      url: DOMAINS,
      token: await keyOf([mine.id]),
      payload: { hostname: uniqueHost() },
    });
    expect(limited.status).toBe(403);
    expect(limited.body.error.code).toBe('FORBIDDEN');
    const unlimited = await d.t.request({
      method: 'POST',
      url: DOMAINS,
      token: await keyOf(),
      payload: { hostname: uniqueHost() },
    });
    expect(unlimited.status).toBe(201);
  });

  it('when a verified domain is deleted and claimed again (by its owner or anyone), then its retired names stay retired', async () => {
    const [owner, other] = [await createUser(d.t, { status: 'active' }), await createUser(d.t, { status: 'active' })];
    const domain = await verifiedDomain(d, owner.token);
    const made = await createLink(owner.token, { domain: domain.hostname, aliases: ['gone-alias'] });
    expect(made.status, made.text).toBe(201);
    const linkUrl = `${LINKS}/${made.body.short_code}?domain=${domain.hostname}`;
    expect((await d.t.request({ method: 'DELETE', url: linkUrl, token: owner.token })).status).toBe(204);
    expect((await d.t.request({ method: 'DELETE', url: `${DOMAINS}/${domain.id}`, token: owner.token })).status).toBe(
      204,
    );
    for (const user of [owner, other]) {
      const again = await d.t.request({
        method: 'POST',
        url: DOMAINS,
        token: user.token,
        payload: { hostname: domain.hostname },
      });
      expect(again.status, again.text).toBe(201);
      const code = await createLink(user.token, { domain: domain.hostname, short_code: made.body.short_code });
      expect(code.status, code.text).toBe(409);
      const alias = await createLink(user.token, { domain: domain.hostname, aliases: ['gone-alias'] });
      expect(alias.status, alias.text).toBe(409);
      expect((await createLink(user.token, { domain: domain.hostname, short_code: 'fresh1' })).status).toBe(201);
    }
  });

  it('when an admin deletes a verified domain with its links, then their live codes are retired for the next claim', async () => {
    const owner = await createUser(d.t, { status: 'active' });
    const domain = await verifiedDomain(d, owner.token);
    const live = await createLink(owner.token, { domain: domain.hostname, aliases: ['live-alias'] });
    expect(
      (await d.t.request({ method: 'DELETE', url: `${DOMAINS}/${domain.id}?force=true`, token: admin.token })).status,
    ).toBe(204);
    const again = await verifiedDomain(d, admin.token, { hostname: domain.hostname });
    for (const payload of [{ short_code: live.body.short_code }, { aliases: ['live-alias'] }]) {
      expect((await createLink(admin.token, { domain: again.hostname, ...payload })).status).toBe(409);
    }
    const visit = await d.t.request({ url: `/${live.body.short_code}`, headers: { host: domain.hostname } });
    expect(visit.status).toBe(404);
  });

  it("when an unverified claim is deleted, then its retired codes bind its owner's next claim, not another user's", async () => {
    const [squatter, owner] = [
      await createUser(d.t, { status: 'active' }),
      await createUser(d.t, { status: 'active' }),
    ];
    const claim = await addDomain(d.t, squatter.token);
    const made = await createLink(squatter.token, { domain: claim.hostname, short_code: 'wanted1' });
    const claimAs = (token: string) =>
      d.t.request({ method: 'POST', url: DOMAINS, token, payload: { hostname: claim.hostname } });
    const linkUrl = `${LINKS}/wanted1?domain=${claim.hostname}`;
    expect((await d.t.request({ method: 'DELETE', url: linkUrl, token: squatter.token })).status).toBe(204);
    expect((await d.t.request({ method: 'DELETE', url: `${DOMAINS}/${claim.id}`, token: squatter.token })).status).toBe(
      204,
    );
    expect((await claimAs(squatter.token)).status).toBe(201);
    expect(
      (await createLink(squatter.token, { domain: claim.hostname, short_code: made.body.short_code })).status,
    ).toBe(409);
    expect((await claimAs(owner.token)).status).toBe(201);
    expect((await createLink(owner.token, { domain: claim.hostname, short_code: made.body.short_code })).status).toBe(
      201,
    );
  });
});
