import { describe, expect, it } from 'vitest';
import { engines } from '../../helpers/app.js';
import { useTestApp, useUser } from '../../helpers/fixtures.js';
import { createUser } from '../../helpers/factories.js';
import { createLink, LINKS, patchLink } from './links.helpers.js';

describe.each(engines)('link titles on %s', (engine) => {
  const t = useTestApp(engine);
  const u = useUser(t);

  it('when a link is created with a title, then the record carries it trimmed, and without one it is null', async () => {
    const titled = await createLink(t, { title: '  Spring campaign  ' }, u.token);
    expect((titled as unknown as { title: string }).title).toBe('Spring campaign');
    const plain = await createLink(t, {}, u.token);
    expect((plain as unknown as { title: null }).title).toBeNull();
    const v2 = await t.request({
      method: 'POST',
      url: '/api/v2/links',
      payload: { originalUrl: 'https://example.com/v2', title: 'Zwei' },
      token: u.token,
    });
    expect(v2.status).toBe(201);
    expect(v2.body).toMatchObject({ title: 'Zwei' });
  });

  it('when a title is longer than 200 characters, then creation and PATCH answer 400 naming it', async () => {
    const long = 'x'.repeat(201);
    const res = await t.request({
      method: 'POST',
      url: LINKS,
      payload: { original_url: 'https://example.com/t', title: long },
      token: u.token,
    });
    expect(res.status).toBe(400);
    expect(JSON.stringify(res.body)).toContain('title');
    const link = await createLink(t, { title: 'x'.repeat(200) }, u.token);
    expect((await patchLink(t, link.short_code, { title: long }, { token: u.token })).status).toBe(400);
  });

  it('when PATCH sets or clears the title, then the record follows', async () => {
    const link = await createLink(t, {}, u.token);
    const set = await patchLink(t, link.short_code, { title: 'Now named' }, { token: u.token });
    expect(set.status).toBe(200);
    expect(set.body).toMatchObject({ title: 'Now named' });
    const cleared = await patchLink(t, link.short_code, { title: null }, { token: u.token });
    expect(cleared.body).toMatchObject({ title: null });
  });

  it('when q matches only the title (in another case), then the link is listed', async () => {
    const owner = await createUser(t);
    const match = await createLink(
      t,
      { title: 'Quarterly Report', original_url: 'https://example.com/q1' },
      owner.token,
    );
    await createLink(t, { title: 'Other', original_url: 'https://example.com/q2' }, owner.token);
    const res = await t.request({ url: `/api/v1/users/${owner.id}/links?q=quarterly`, token: owner.token });
    expect(res.status).toBe(200);
    expect((res.body as { data: { short_code: string }[] }).data.map((l) => l.short_code)).toEqual([match.short_code]);
  });
});
