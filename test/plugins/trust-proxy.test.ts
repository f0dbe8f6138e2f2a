import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { createTestApp, engines } from '../helpers/app.js';
import { HUMAN_UA } from '../modules/links/links.helpers.js';

/** One visit from 127.0.0.1 through a real socket, with this X-Forwarded-For (or none). */
function visitVia(base: string, code: string, forwardedFor: string | undefined): Promise<number> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = {
      'user-agent': HUMAN_UA,
      ...(forwardedFor !== undefined ? { 'x-forwarded-for': forwardedFor } : {}),
    };
    http
      .get(`${base}/${code}`, { headers, agent: false }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode!));
      })
      .on('error', reject);
  });
}

const CHAIN = '198.51.100.7, 203.0.113.9, 10.0.0.2';

/**
 * SPEC §17: TRUST_PROXY as documented, through a real socket (the connecting address is 127.0.0.1) with
 * X-Forwarded-For. The client address a visit is recorded with shows what was trusted.
 */
describe.each(engines)('TRUST_PROXY on %s', (engine) => {
  it.each([
    ['false', CHAIN, '127.0.0.1'],
    ['true', CHAIN, '198.51.100.7'],
    // A hop count: the nearest n hops are trusted; 1 makes the client the address the nearest proxy saw.
    ['1', CHAIN, '10.0.0.2'],
    ['2', CHAIN, '203.0.113.9'],
    ['9', CHAIN, '198.51.100.7'],
    ['1', undefined, '127.0.0.1'],
    // Addresses and CIDRs: trusted hops are skipped from the right, the first untrusted one is the client.
    ['127.0.0.1', CHAIN, '10.0.0.2'],
    ['127.0.0.1, 10.0.0.0/8', CHAIN, '203.0.113.9'],
    ['loopback, 10.0.0.0/8, 203.0.113.0/24', CHAIN, '198.51.100.7'],
    ['192.0.2.1', CHAIN, '127.0.0.1'],
  ])(
    'when TRUST_PROXY=%s and X-Forwarded-For is %s, then the visit is recorded from %s',
    async (trustProxy, forwardedFor, client) => {
      const t = await createTestApp(engine, { env: { TRUST_PROXY: trustProxy }, redisUrl: '' });
      try {
        await t.app.listen({ port: 0, host: '127.0.0.1' });
        const base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
        const link = (
          await t.request({
            method: 'POST',
            url: '/api/v1/links',
            payload: { original_url: 'https://example.com/proxied' },
          })
        ).body;
        expect(await visitVia(base, link.short_code, forwardedFor)).toBe(302);
        await t.app.clickQueue.flush();
        const clicks = await t.storage.db.selectFrom('clicks').select('ip').where('link_id', '=', link.id).execute();
        expect(clicks.map((c) => c.ip)).toEqual([client]);
      } finally {
        await t.close();
      }
    },
  );
});
