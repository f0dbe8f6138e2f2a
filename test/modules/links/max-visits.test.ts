import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { engines, type TestApp } from '../../helpers/app.js';
import { useTestApp, useUser } from '../../helpers/fixtures.js';
import { expectEnvelope } from '../../helpers/expect-envelope.js';
import { createUser } from '../../helpers/factories.js';
import {
  appOnSocket,
  BOT_UA,
  BROWSER_ACCEPT,
  clickRecords,
  createLink,
  HUMAN_UA,
  LINKS,
  patchLink,
  visit,
} from './links.helpers.js';

describe.each(engines)('max_visits on %s', (engine) => {
  // A visit limit needs an owner (SPEC §17: an anonymous link cannot have one).
  const t = useTestApp(engine);
  const owner = useUser(t);

  it('when a link allows 3 visits, then visits 1-3 are redirected and later ones answer 410 LINK_EXHAUSTED (a page for browsers), with no click', async () => {
    const link = await createLink(t, { max_visits: 3 }, owner.token);
    for (let i = 0; i < 3; i += 1) expect((await visit(t, link.short_code)).status).toBe(302);
    const json = await visit(t, link.short_code);
    expectEnvelope(json, 410, 'LINK_EXHAUSTED');
    const html = await visit(t, link.short_code, { accept: BROWSER_ACCEPT });
    expect(html.status).toBe(410);
    expect(html.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(html.text).toMatch(/Link used up/);
    expect(await clickRecords(t, link.id)).toHaveLength(3);
    expect((await t.request({ url: `${LINKS}/${link.short_code}`, token: owner.token })).body.max_visits).toBe(3);
  });

  it('when bots, HEAD requests and visits without a User-Agent come, then they are redirected but not counted; once used up, they get 410 too', async () => {
    const link = await createLink(t, { max_visits: 2 }, owner.token);
    expect((await visit(t, link.short_code, { 'user-agent': BOT_UA })).status).toBe(302);
    expect((await t.request({ url: `/${link.short_code}` })).status).toBe(302); // no User-Agent: not a person
    expect(
      (await t.request({ method: 'HEAD', url: `/${link.short_code}`, headers: { 'user-agent': HUMAN_UA } })).status,
    ).toBe(302);
    expect((await visit(t, link.short_code)).status).toBe(302);
    expect((await visit(t, link.short_code)).status).toBe(302);
    expectEnvelope(await visit(t, link.short_code), 410, 'LINK_EXHAUSTED');
    expect((await visit(t, link.short_code, { 'user-agent': BOT_UA })).status).toBe(410);
    expect((await t.request({ method: 'HEAD', url: `/${link.short_code}` })).status).toBe(410);
    const counted = await t.storage.db
      .selectFrom('links')
      .select('visit_count')
      .where('id', '=', link.id)
      .executeTakeFirstOrThrow();
    expect(Number(counted.visit_count)).toBe(2);
  });

  it('when the owner raises max_visits of a used-up link, then it redirects again; lowering it below the count ends it', async () => {
    const link = await createLink(t, { max_visits: 1 }, owner.token);
    expect((await visit(t, link.short_code)).status).toBe(302);
    expect((await visit(t, link.short_code)).status).toBe(410);
    await patchLink(t, link.short_code, { max_visits: 2 }, { token: owner.token });
    expect((await visit(t, link.short_code)).status).toBe(302);
    expect((await visit(t, link.short_code)).status).toBe(410);
    await patchLink(t, link.short_code, { max_visits: null }, { token: owner.token });
    expect((await visit(t, link.short_code)).status).toBe(302);
  });

  it('when a limit is set on a link that was cached without one, then the next visit is counted against it', async () => {
    const link = await createLink(t, {}, owner.token);
    for (let i = 0; i < 3; i += 1) expect((await visit(t, link.short_code)).status).toBe(302);
    await patchLink(t, link.short_code, { max_visits: 1 }, { token: owner.token });
    expect((await visit(t, link.short_code)).status).toBe(302);
    expect((await visit(t, link.short_code)).status).toBe(410);
  });
});

/** Over a real socket, where cached links may take the fast path: a limited link must not. */
describe.each(engines)('concurrent visits to a limited link on %s', (engine) => {
  let t: TestApp;
  let base: string;
  beforeAll(async () => {
    ({ t, base } = await appOnSocket(engine));
  });
  afterAll(async () => t.close());

  it('when 50 people visit a max_visits 10 link at once, then exactly 10 are redirected and 40 get 410, and 10 clicks are recorded', async () => {
    const link = await createLink(t, { max_visits: 10 }, (await createUser(t)).token);
    // A bot's visit first: the link is cached, uncounted.
    expect(
      (await fetch(`${base}/${link.short_code}`, { redirect: 'manual', headers: { 'user-agent': BOT_UA } })).status,
    ).toBe(302);
    const statuses = await Promise.all(
      Array.from({ length: 50 }, async () => {
        const res = await fetch(`${base}/${link.short_code}`, {
          redirect: 'manual',
          headers: { 'user-agent': HUMAN_UA },
        });
        await res.arrayBuffer();
        return res.status;
      }),
    );
    expect(statuses.filter((s) => s === 302)).toHaveLength(10);
    expect(statuses.filter((s) => s === 410)).toHaveLength(40);
    expect(await clickRecords(t, link.id)).toHaveLength(11); // the bot's and the ten people's
  });
});
