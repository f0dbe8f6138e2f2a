import { describe, expect, it } from 'vitest';
import { engines } from '../../helpers/app.js';
import { useTestApp } from '../../helpers/fixtures.js';
import { createUser, linkCount } from '../../helpers/factories.js';

describe.each(engines)('Idempotency-Key on POST /api/v1/links on %s', (engine) => {
  const t = useTestApp(engine);

  it('when a creation is retried with the same key, then the first link is replayed and no second link exists', async () => {
    const u = await createUser(t);
    const before = await linkCount(t);
    const send = () =>
      t.request({
        method: 'POST',
        url: '/api/v1/links',
        token: u.token,
        headers: { 'idempotency-key': 'link-retry-1' },
        payload: { original_url: 'https://example.com/once' },
      });
    const first = await send();
    const again = await send();
    expect(first.status).toBe(201);
    expect(again.status).toBe(201);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body).toEqual(first.body);
    expect(again.headers.location).toBe(first.headers.location);
    expect(await linkCount(t)).toBe(before + 1);
  });

  it('when the same key comes with another body, then 422 IDEMPOTENCY_KEY_REUSED; without a key, every POST creates', async () => {
    const u = await createUser(t);
    const key = { 'idempotency-key': 'link-reuse-1' };
    expect(
      (
        await t.request({
          method: 'POST',
          url: '/api/v1/links',
          token: u.token,
          headers: key,
          payload: { original_url: 'https://example.com/a' },
        })
      ).status,
    ).toBe(201);
    const other = await t.request({
      method: 'POST',
      url: '/api/v1/links',
      token: u.token,
      headers: key,
      payload: { original_url: 'https://example.com/b' },
    });
    expect(other.status).toBe(422);
    expect(other.body.error.code).toBe('IDEMPOTENCY_KEY_REUSED');
    const a = await t.request({
      method: 'POST',
      url: '/api/v1/links',
      token: u.token,
      payload: { original_url: 'https://example.com/c' },
    });
    const b = await t.request({
      method: 'POST',
      url: '/api/v1/links',
      token: u.token,
      payload: { original_url: 'https://example.com/c' },
    });
    expect(a.body.short_code).not.toBe(b.body.short_code);
  });

  it('when a custom code is taken inside an idempotent request, then 409 and the key stays usable', async () => {
    const u = await createUser(t);
    await t.request({
      method: 'POST',
      url: '/api/v1/links',
      token: u.token,
      payload: { original_url: 'https://example.com/t', short_code: 'takenK' },
    });
    const clash = await t.request({
      method: 'POST',
      url: '/api/v1/links',
      token: u.token,
      headers: { 'idempotency-key': 'k-clash' },
      payload: { original_url: 'https://example.com/t', short_code: 'takenK' },
    });
    expect(clash.status).toBe(409);
    const retry = await t.request({
      method: 'POST',
      url: '/api/v1/links',
      token: u.token,
      headers: { 'idempotency-key': 'k-clash' },
      payload: { original_url: 'https://example.com/t', short_code: 'takenK' },
    });
    expect(retry.status).toBe(409);
    expect(retry.headers['idempotent-replayed']).toBeUndefined();
  });
});
