import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { engines } from '../helpers/app.js';
import { useTestApp, useUser } from '../helpers/fixtures.js';
import { expectEnvelope } from '../helpers/expect-envelope.js';
import { linkCount } from '../helpers/factories.js';

/** SPEC §17, "Bodies": a body is read as it arrives and in UTF-8, or refused with 415. */
describe.each(engines)('content codings and charsets of request bodies on %s', (engine) => {
  const t = useTestApp(engine);
  const owner = useUser(t);

  const json = (url: string) => JSON.stringify({ original_url: url });

  it('when a JSON body comes with a Content-Encoding other than identity, then 415 naming Content-Encoding with Accept-Encoding: identity, and nothing is created', async () => {
    const before = await linkCount(t);
    for (const [coding, payload] of [
      ['gzip', gzipSync(json('https://example.com/gz'))],
      ['gzip', json('https://example.com/plain')],
      ['br', json('https://example.com/br')],
      ['identity, gzip', json('https://example.com/two')],
    ] as const) {
      const res = await t.app.inject({
        method: 'POST',
        url: '/api/v1/links',
        headers: { 'content-type': 'application/json', 'content-encoding': coding },
        payload,
      });
      const parsed = { status: res.statusCode, headers: res.headers, body: res.json(), text: res.body };
      expect(expectEnvelope(parsed, 415, 'UNSUPPORTED_MEDIA_TYPE'), coding).toEqual(['Content-Encoding']);
      expect(res.headers['accept-encoding']).toBe('identity');
      expect(
        t.contract.check('POST', '/api/v1/links', res.statusCode, res.headers['content-type'] as string, res.body),
      ).toEqual([]);
    }
    expect(await linkCount(t)).toBe(before);
    const identity = await t.request({
      method: 'POST',
      url: '/api/v1/links',
      headers: { 'content-encoding': 'identity' },
      payload: { original_url: 'https://example.com/identity' },
    });
    expect(identity.status).toBe(201);
  });

  it('when a JSON body names a charset other than UTF-8, then 415 naming Content-Type; utf-8 in any spelling is read', async () => {
    const utf16 = Buffer.from(`\ufeff${json('https://example.com/utf16')}`, 'utf16le');
    const refused = await t.app.inject({
      method: 'POST',
      url: '/api/v1/links',
      headers: { 'content-type': 'application/json; charset=utf-16' },
      payload: utf16,
    });
    expect(refused.statusCode).toBe(415);
    expect(refused.json().error.details).toEqual([{ field: 'Content-Type', message: expect.stringMatching(/utf-8/) }]);
    for (const type of ['application/json; charset=iso-8859-1', 'application/json;charset="latin1"']) {
      expect(
        expectEnvelope(
          await t.request({
            method: 'POST',
            url: '/api/v1/links',
            headers: { 'content-type': type },
            payload: { original_url: 'https://example.com/é' },
          }),
          415,
          'UNSUPPORTED_MEDIA_TYPE',
        ),
      ).toEqual(['Content-Type']);
    }
    const patch = await t.request({
      method: 'PATCH',
      url: '/api/v1/users/me',
      token: owner.token,
      headers: { 'content-type': 'application/merge-patch+json; charset=utf-16le' },
      payload: { name: 'x' },
    });
    expectEnvelope(patch, 415, 'UNSUPPORTED_MEDIA_TYPE');
    expect(patch.headers['accept-patch']).toBeDefined();
    for (const type of [
      'application/json; charset=utf-8',
      'application/json; charset=UTF-8',
      'application/json; charset="utf8"',
    ]) {
      expect(
        (
          await t.request({
            method: 'POST',
            url: '/api/v1/links',
            headers: { 'content-type': type },
            payload: { original_url: 'https://example.com/ok' },
          })
        ).status,
      ).toBe(201);
    }
  });

  it('when the password form comes compressed or in another charset, then 415 too', async () => {
    const link = await t.request({
      method: 'POST',
      url: '/api/v1/links',
      token: owner.token,
      payload: { original_url: 'https://example.com/form', password: 'form-password-1' },
    });
    for (const headers of [
      { 'content-type': 'application/x-www-form-urlencoded', 'content-encoding': 'gzip' },
      { 'content-type': 'application/x-www-form-urlencoded; charset=iso-8859-1' },
    ] as Array<Record<string, string>>) {
      const res = await t.request({
        method: 'POST',
        url: `/${link.body.short_code}`,
        headers,
        payload: 'password=form-password-1',
      });
      expectEnvelope(res, 415, 'UNSUPPORTED_MEDIA_TYPE');
    }
  });
});
