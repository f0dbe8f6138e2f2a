import { once } from 'node:events';
import net, { type AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { engines } from '../../helpers/app.js';
import { useTestApp } from '../../helpers/fixtures.js';
import { withForwardedQuery } from '../../../src/modules/redirect/visit-policy.js';
import { createLink, visit } from '../links/links.helpers.js';

describe('forwarded query strings', () => {
  it.each([
    ['https://example.com/p', 'utm_source=x', 'https://example.com/p?utm_source=x'],
    ['https://example.com/p?a=1', 'utm_source=x&utm_medium=y', 'https://example.com/p?a=1&utm_source=x&utm_medium=y'],
    ['https://example.com/p?a=1#top', 'utm_source=x', 'https://example.com/p?a=1&utm_source=x#top'],
    ['https://example.com/p#top', 'b=2', 'https://example.com/p?b=2#top'],
    ['https://example.com/p?', 'b=2', 'https://example.com/p?b=2'],
    ['https://example.com/p?a=1&', 'b=2', 'https://example.com/p?a=1&b=2'],
    ['https://example.com/p?a=1', '', 'https://example.com/p?a=1'],
    ['https://example.com/p', 'q=a#b c\u00e9', 'https://example.com/p?q=a%23b%20c%E9'],
  ])('when %s is visited with ?%s, then the Location is %s', (target, query, expected) => {
    expect(withForwardedQuery(target, query)).toBe(expected);
  });
});

describe.each(engines)('forward_query on %s', (engine) => {
  const t = useTestApp(engine);

  it('when a forward_query link is visited with campaign parameters, then they are appended before the fragment', async () => {
    const link = await createLink(t, {
      original_url: 'https://example.com/landing?ref=ferry#pricing',
      forward_query: true,
    });
    const res = await visit(t, `${link.short_code}?utm_source=news&utm_campaign=spring%202027`);
    expect(res.status).toBe(302);
    expect(res.headers.location).toBe(
      'https://example.com/landing?ref=ferry&utm_source=news&utm_campaign=spring%202027#pricing',
    );
    expect((await visit(t, link.short_code)).headers.location).toBe('https://example.com/landing?ref=ferry#pricing');
  });

  it('when a link without forward_query is visited with a query string, then the query is not passed on', async () => {
    const link = await createLink(t, { original_url: 'https://example.com/plain' });
    expect((await visit(t, `${link.short_code}?utm_source=news`)).headers.location).toBe('https://example.com/plain');
  });

  it('when the raw request target carries a # or quotes, then the Location stays one valid header with them encoded', async () => {
    const link = await createLink(t, { original_url: 'https://example.com/raw', forward_query: true });
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const socket = net.connect((t.app.server.address() as AddressInfo).port, '127.0.0.1');
    await once(socket, 'connect');
    socket.write(`GET /${link.short_code}?a="x"#frag HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n`);
    let raw = '';
    socket.on('data', (d: Buffer) => (raw += d.toString('latin1')));
    await once(socket, 'end');
    expect(raw).toMatch(/^HTTP\/1\.1 302/);
    expect(raw).toContain('\r\nlocation: https://example.com/raw?a="x"%23frag\r\n');
  });
});
