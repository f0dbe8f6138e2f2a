import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { engines } from '../../helpers/app.js';
import { useTestApp } from '../../helpers/fixtures.js';
import { expectEnvelope } from '../../helpers/expect-envelope.js';
import { createUser, linkCount } from '../../helpers/factories.js';
import { createLink, LINKS } from './links.helpers.js';

describe.each(engines)('POST /api/v1/links/bulk on %s', (engine) => {
  const t = useTestApp(engine);

  const bulk = (links: unknown[], opts: { token?: string; key?: string; version?: number } = {}) =>
    t.request({
      method: 'POST',
      url: `/api/v${opts.version ?? 1}/links/bulk`,
      payload: { links },
      ...(opts.token ? { token: opts.token } : {}),
      headers: opts.key ? { 'idempotency-key': opts.key } : {},
    });
  const fields = (item: { error: { details: Array<{ field: string }> } }) =>
    item.error.details.map((d) => d.field).sort();

  it('when every item is good, then 200 with one 201 result per item, in order, each a link that exists', async () => {
    const u = await createUser(t);
    const res = await bulk(
      [
        { original_url: 'https://example.com/1' },
        { original_url: 'https://example.com/2', tags: ['batch'] },
        { original_url: 'https://example.com/3', max_visits: 2 },
      ],
      { token: u.token },
    );
    expect(res.status, res.text).toBe(200);
    expect(res.headers.location).toBeUndefined();
    expect(
      res.body.data.map((d: { status: number; link: { original_url: string; user_id: number } }) => [
        d.status,
        d.link.original_url,
        d.link.user_id,
      ]),
    ).toEqual([
      [201, 'https://example.com/1', u.id],
      [201, 'https://example.com/2', u.id],
      [201, 'https://example.com/3', u.id],
    ]);
    for (const item of res.body.data)
      expect((await t.request({ url: `${LINKS}/${item.link.short_code}`, token: u.token })).body).toEqual(item.link);
  });

  it("when some items are bad, then each gets its own 4xx with the envelope's error and the others are created", async () => {
    const u = await createUser(t);
    const taken = await createLink(t, { short_code: `tk${randomUUID().slice(0, 5)}` });
    const dup = `dp${randomUUID().slice(0, 5)}`;
    const before = await linkCount(t);
    const res = await bulk(
      [
        { original_url: 'https://example.com/ok-1' },
        { original_url: 'javascript:alert(1)' },
        { original_url: 'https://example.com/taken', short_code: taken.short_code },
        { original_url: 'https://example.com/reserved', short_code: 'docs' },
        'not an object',
        { original_url: 'https://example.com/extra', colour: 'red', max_visits: 0 },
        { original_url: 'https://example.com/dup-a', short_code: dup },
        { original_url: 'https://example.com/dup-b', short_code: dup },
        { original_url: 'https://example.com/ok-2', password: 'bulk-password-1' },
      ],
      { token: u.token },
    );
    expect(res.status, res.text).toBe(200);
    const d = res.body.data;
    expect(d.map((i: { status: number }) => i.status)).toEqual([201, 400, 409, 400, 400, 400, 201, 409, 201]);
    expect(fields(d[1])).toEqual(['original_url']);
    expect(d[2].error.code).toBe('CONFLICT');
    expect(fields(d[3])).toEqual(['short_code']);
    expect(d[4].error).toMatchObject({ code: 'VALIDATION_ERROR', details: [{ field: 'body' }] });
    expect(fields(d[5])).toEqual(['colour', 'max_visits']);
    expect(d[6].link.short_code).toBe(dup);
    expect(d[8].link.has_password).toBe(true);
    expect(await linkCount(t)).toBe(before + 3);
  });

  it('when the batch is empty, too large or not a batch, then the whole request is a 400', async () => {
    expectEnvelope(await bulk([]), 400, 'VALIDATION_ERROR');
    expectEnvelope(
      await bulk(Array.from({ length: 101 }, (_, i) => ({ original_url: `https://example.com/${i}` }))),
      400,
      'VALIDATION_ERROR',
    );
    expectEnvelope(
      await t.request({ method: 'POST', url: `${LINKS}/bulk`, payload: [{ original_url: 'https://example.com' }] }),
      400,
      'VALIDATION_ERROR',
    );
    expect(
      (await bulk(Array.from({ length: 100 }, (_, i) => ({ original_url: `https://example.com/hundred/${i}` })))).body
        .data,
    ).toHaveLength(100);
  });

  it('when the batch is retried with its Idempotency-Key, then the same per-item results are replayed and nothing is created again', async () => {
    const u = await createUser(t);
    const key = randomUUID();
    const taken = await createLink(t, { short_code: `ik${randomUUID().slice(0, 5)}` });
    const items = [
      { original_url: 'https://example.com/idem-1' },
      { original_url: 'https://example.com/idem-2', short_code: taken.short_code },
      { original_url: 'ftp://x' },
    ];
    const first = await bulk(items, { token: u.token, key });
    const before = await linkCount(t);
    const again = await bulk(items, { token: u.token, key });
    expect(again.status).toBe(200);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body).toEqual(first.body);
    expect(first.body.data.map((i: { status: number }) => i.status)).toEqual([201, 409, 400]);
    expect(await linkCount(t)).toBe(before);
    expectEnvelope(
      await bulk([{ original_url: 'https://example.com/other' }], { token: u.token, key }),
      422,
      'IDEMPOTENCY_KEY_REUSED',
    );
  });

  it('when v2 is used, then items and results are camelCase, and a snake_case item is its own 400', async () => {
    const res = await bulk(
      [{ originalUrl: 'https://example.com/v2', forwardQuery: true }, { original_url: 'https://example.com/v1-name' }],
      { version: 2 },
    );
    expect(res.status, res.text).toBe(200);
    expect(res.body.data[0]).toMatchObject({
      status: 201,
      link: { originalUrl: 'https://example.com/v2', forwardQuery: true, hasPassword: false },
    });
    expect(res.body.data[1].status).toBe(400);
    expect(fields(res.body.data[1])).toEqual(['originalUrl', 'original_url']); // the unknown field, and the missing one
    const refused = await bulk([{ originalUrl: 'javascript:alert(1)' }], { version: 2 });
    expect(fields(refused.body.data[0])).toEqual(['originalUrl']);
    const single = await t.request({
      method: 'POST',
      url: '/api/v2/links',
      payload: { originalUrl: 'javascript:alert(1)', expiresAt: '2000-01-01T00:00:00Z' },
    });
    expect(expectEnvelope(single, 400, 'VALIDATION_ERROR')).toEqual(['expiresAt', 'originalUrl']);
  });
});
