import { describe, expect, it } from 'vitest';
import { engines } from '../../helpers/app.js';
import { expectEnvelope } from '../../helpers/expect-envelope.js';
import { linkCount } from '../../helpers/factories.js';
import { useTestApp, useUser } from '../../helpers/fixtures.js';
import { checkOriginalUrl, isLocalHost } from '../../../src/modules/links/original-url.js';

// SPEC §12: a link may never point at this service, whatever the spelling of its origin.
describe('isLocalHost and the own-origin check', () => {
  it('when a host is a loopback or unspecified address in any form, then it is local; other hosts are not', () => {
    for (const h of [
      'localhost',
      'a.localhost',
      '127.0.0.1',
      '127.0.0.2',
      '127.255.255.254',
      '0.0.0.0',
      '::1',
      '::',
      '::ffff:7f00:1',
      '::7f00:1',
      '::ffff:0:0',
    ])
      expect(isLocalHost(h), h).toBe(true);
    for (const h of ['example.com', '128.0.0.1', '10.0.0.1', '::ffff:a00:1', '::2', 'localhost.example'])
      expect(isLocalHost(h), h).toBe(false);
  });

  it('when the target is another site on a loopback host but another port, then it is allowed', () => {
    expect(checkOriginalUrl('http://127.0.0.1:8080/x', 'http://127.0.0.1:3000', 3000)).toMatchObject({ ok: true });
    expect(checkOriginalUrl('http://localhost/x', 'https://fry.example', 3000)).toMatchObject({ ok: true });
    expect(checkOriginalUrl('https://fry.example:8443/x', 'https://fry.example', 3000)).toMatchObject({ ok: true });
  });
});

const LOCAL_BASE_SPELLINGS = [
  'http://127.0.0.1:3000/x',
  'http://0.0.0.0:3000/x',
  'http://127.0.0.2:3000/x',
  'http://[::1]:3000/x',
  'http://[::]:3000/x',
  'http://[::ffff:127.0.0.1]:3000/x',
  'http://[0:0:0:0:0:ffff:7f00:1]:3000/x',
  'http://localhost.:3000/x',
  'http://LOCALHOST:3000/x',
  'http://app.localhost:3000/x',
  'http://2130706433:3000/x',
  'http://0x7f.1:3000/x',
  'http://%31%32%37.0.0.1:3000/x',
  'https://127.0.0.1:3000/x',
];
const PUBLIC_BASE_SPELLINGS = [
  'https://fry.example/abc',
  'https://FRY.EXAMPLE/abc',
  'https://fry.example./abc',
  'https://fry.example%2e/abc',
  'https://fry%2Eexample/abc',
  'http://fry.example/abc',
  'http://fry.example:443/abc',
  'https://fry.example:443/abc',
  'http://fry.example./abc',
  // Whatever PUBLIC_BASE_URL says, the service still listens on PORT on the loopback interface.
  'http://127.0.0.1:3000/abc',
  'http://[::ffff:127.0.0.1]:3000/abc',
  'http://localhost.:3000/abc',
];

describe.each(engines)('self-links on %s', (engine) => {
  const local = useTestApp(engine, { env: { PORT: '3000' } });
  const pub = useTestApp(engine, { env: { PORT: '3000', PUBLIC_BASE_URL: 'https://fry.example' } });
  const user = useUser(local);
  const pubUser = useUser(pub);

  it.each(LOCAL_BASE_SPELLINGS)(
    'when the default base URL is spelled %s, then creation is 400 on original_url and nothing is stored',
    async (url) => {
      const before = await linkCount(local);
      const res = await local.request({
        method: 'POST',
        url: '/api/v1/links',
        token: user.token,
        payload: { original_url: url },
      });
      expect(expectEnvelope(res, 400, 'VALIDATION_ERROR')).toEqual(['original_url']);
      expect(res.body.error.details[0].message).toMatch(/this service/);
      expect(await linkCount(local)).toBe(before);
    },
  );

  it.each(PUBLIC_BASE_SPELLINGS)(
    'when an https PUBLIC_BASE_URL is spelled %s, then creation is 400 on original_url',
    async (url) => {
      const res = await pub.request({
        method: 'POST',
        url: '/api/v1/links',
        token: pubUser.token,
        payload: { original_url: url },
      });
      expect(expectEnvelope(res, 400, 'VALIDATION_ERROR')).toEqual(['original_url']);
    },
  );

  it('when a link is PATCHed (or bulk-created) to a spelling of the own origin, then 400 and the link keeps its target', async () => {
    const created = await pub.request({
      method: 'POST',
      url: '/api/v1/links',
      token: pubUser.token,
      payload: { original_url: 'https://example.com/keep' },
    });
    expect(created.status).toBe(201);
    for (const url of ['https://fry.example./x', 'http://fry.example/x', 'http://[::ffff:127.0.0.1]:3000/x']) {
      const res = await pub.request({
        method: 'PATCH',
        url: `/api/v1/links/${created.body.short_code}`,
        token: pubUser.token,
        payload: { original_url: url },
      });
      expect(expectEnvelope(res, 400, 'VALIDATION_ERROR')).toEqual(['original_url']);
    }
    const after = await pub.request({ url: `/api/v1/links/${created.body.short_code}`, token: pubUser.token });
    expect(after.body.original_url).toBe('https://example.com/keep');
    const bulk = await pub.request({
      method: 'POST',
      url: '/api/v1/links/bulk',
      token: pubUser.token,
      payload: { links: [{ original_url: 'https://fry.example%2e/y' }, { original_url: 'https://example.com/ok' }] },
    });
    expect(bulk.status).toBe(200);
    expect(bulk.body.data.map((d: { status: number }) => d.status)).toEqual([400, 201]);
  });

  it('when a target only looks close to the own origin, then it is accepted', async () => {
    for (const url of [
      'https://fry.example.com/x',
      'https://sub.fry.example/x',
      'http://127.0.0.1:3001/x',
      'https://example.com/',
    ]) {
      const res = await pub.request({
        method: 'POST',
        url: '/api/v1/links',
        token: pubUser.token,
        payload: { original_url: url },
      });
      expect(res.status, url).toBe(201);
    }
  });
});
