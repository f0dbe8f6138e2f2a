import { describe, expect, it } from 'vitest';
import { openEventsCursor } from '../../../src/db/events.js';
import { engines } from '../../helpers/app.js';
import { useTestApp, useUser } from '../../helpers/fixtures.js';

/**
 * SPEC §22: every change writes its public event in its own transaction, carrying the record as the API shows it;
 * a change refused (409) or undone writes none, and a bulk request writes one per link.
 */
describe.each(engines)('the public events of link changes on %s', (engine) => {
  const t = useTestApp(engine);
  const owner = useUser(t);
  const cursor = () => openEventsCursor(t.storage.db, 'end');

  it('when a link is created, changed and deleted, then each change has its event with the link as the API shows it', async () => {
    const c = await cursor();
    const created = await t.request({
      method: 'POST',
      url: '/api/v1/links',
      token: owner.token,
      payload: { original_url: 'https://example.com/events', tags: ['ev'] },
    });
    expect(created.status).toBe(201);
    const code = created.body.short_code as string;
    const patched = await t.request({
      method: 'PATCH',
      url: `/api/v1/links/${code}`,
      token: owner.token,
      headers: { 'content-type': 'application/merge-patch+json' },
      payload: { title: 'Changed' },
    });
    expect(patched.status, patched.text).toBe(200);
    expect((await t.request({ method: 'DELETE', url: `/api/v1/links/${code}`, token: owner.token })).status).toBe(204);
    const events = await c.read();
    expect(events.map((e) => e.event.type)).toEqual(['link.created', 'link.updated', 'link.deleted']);
    expect(events[0]!.event.data).toEqual(created.body);
    expect(events[1]!.event.data).toEqual(patched.body);
    expect(events[2]!.event.data).toMatchObject({ id: created.body.id, title: 'Changed', tags: ['ev'] });
    expect(events.every((e) => e.userId === owner.id && e.linkId === created.body.id)).toBe(true);
  });

  it('when a change is refused with a 409, then no event is written', async () => {
    const first = await t.request({
      method: 'POST',
      url: '/api/v1/links',
      token: owner.token,
      payload: { original_url: 'https://example.com/first' },
    });
    expect(first.status).toBe(201);
    const c = await cursor();
    const clash = await t.request({
      method: 'POST',
      url: '/api/v1/links',
      token: owner.token,
      payload: { original_url: 'https://example.com/second', aliases: [first.body.short_code] },
    });
    expect(clash.status).toBe(409);
    expect(await c.read()).toEqual([]);
  });

  it('when links are created in bulk, then each has its own link.created event', async () => {
    const c = await cursor();
    const res = await t.request({
      method: 'POST',
      url: '/api/v1/links/bulk',
      token: owner.token,
      payload: { links: [1, 2, 3].map((n) => ({ original_url: `https://example.com/bulk/${n}` })) },
    });
    expect(res.status, res.text).toBe(200);
    const events = await c.read();
    expect(events.map((e) => e.event.type)).toEqual(['link.created', 'link.created', 'link.created']);
    expect(events.map((e) => (e.event.data as { id: number }).id).sort()).toEqual(
      (res.body.data as Array<{ link: { id: number } }>).map((d) => d.link.id).sort(),
    );
  });

  it('when events are written, then /metrics counts them in ferry_events_written_total; a refused change adds none', async () => {
    const written = async () => {
      const res = await t.app.inject({ url: '/metrics' });
      const m = /^ferry_events_written_total (\d+)$/m.exec(res.body);
      expect(m, 'ferry_events_written_total on /metrics').not.toBeNull();
      return Number(m![1]);
    };
    const before = await written();
    const res = await t.request({
      method: 'POST',
      url: '/api/v1/links/bulk',
      token: owner.token,
      payload: { links: [1, 2].map((n) => ({ original_url: `https://example.com/counted/${n}` })) },
    });
    expect(res.status, res.text).toBe(200);
    expect(await written()).toBe(before + 2);
    const clash = await t.request({
      method: 'POST',
      url: '/api/v1/links',
      token: owner.token,
      payload: { original_url: 'https://example.com/clash', aliases: [res.body.data[0].link.short_code] },
    });
    expect(clash.status).toBe(409);
    expect(await written()).toBe(before + 2);
  });
});
