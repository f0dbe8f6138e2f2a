import { describe, expect, it } from 'vitest';
import { engines, type ApiResponse, type TestApp } from '../helpers/app.js';
import { useTestApp } from '../helpers/fixtures.js';
import { uniqueName } from '../helpers/factories.js';

/** Parses an RFC 9651 List of Items with integer parameters: `"a";q=1;w=2, "b";q=3` → { a: { q: 1, w: 2 }, b: { q: 3 } }. */
function parseList(field: unknown): Record<string, Record<string, number>> {
  expect(typeof field).toBe('string');
  const out: Record<string, Record<string, number>> = {};
  for (const member of String(field).split(',')) {
    const [name, ...params] = member.trim().split(';');
    expect(name).toMatch(/^"[a-z-]+"$/);
    out[name!.slice(1, -1)] = Object.fromEntries(
      params.map((p) => {
        expect(p).toMatch(/^[a-z]+=\d+$/);
        const [k, v] = p.split('=');
        return [k!, Number(v)];
      }),
    );
  }
  return out;
}

function expectRateLimited(res: ApiResponse, policy: string): void {
  expect(res.status).toBe(429);
  expect(res.body.error).toMatchObject({ code: 'RATE_LIMITED', details: [] });
  expect(res.headers['cache-control']).toBe('no-store');
  expect(res.headers['retry-after']).toMatch(/^[1-9]\d*$/);
  const left = parseList(res.headers.ratelimit)[policy]!;
  expect(left.r).toBe(0);
  // draft-ietf-httpapi-ratelimit-headers §5: Retry-After is not earlier than the quota reset.
  expect(Number(res.headers['retry-after'])).toBeGreaterThanOrEqual(left.t!);
}

describe.each(engines)('rate limits on %s', (engine) => {
  const t = useTestApp(engine, { env: { RATE_LIMIT_PER_MINUTE: '5', TOKEN_RATE_LIMIT_PER_MINUTE: '3' } });

  // Every test uses its own client addresses, so buckets never leak between tests.
  let n = 0;
  const freshIp = (): string => `198.51.100.${++n}`;
  /** Signs up and logs in from an address of its own (the shared factory would use up 127.0.0.1's quota). */
  const createUser = async (_t: TestApp) => {
    const ip = freshIp();
    const username = uniqueName();
    const password = 'correct-horse-battery';
    const created = await t.request({
      method: 'POST',
      url: '/api/v1/users',
      remoteAddress: ip,
      payload: { username, email: `${username}@example.com`, password },
    });
    expect(created.status).toBe(201);
    const login = await t.request({
      method: 'POST',
      url: '/api/v1/tokens',
      remoteAddress: ip,
      payload: { username, password },
    });
    expect(login.status).toBe(201);
    return { id: created.body.id as number, username, password, token: login.body.accessToken as string };
  };

  it('when an address sends more than the limit, then 429 RATE_LIMITED with Retry-After, and RateLimit counts down on every answer', async () => {
    const ip = freshIp();
    const remaining: number[] = [];
    for (let i = 0; i < 5; i++) {
      const res = await t.request({ url: '/api/v1/users/1', remoteAddress: ip });
      expect(res.status).toBe(401); // limited responses are not only 2xx: every answer of the route counts
      expect(parseList(res.headers['ratelimit-policy'])).toEqual({ default: { q: 5, w: 60 } });
      const left = parseList(res.headers.ratelimit).default!;
      expect(left.t).toBeGreaterThanOrEqual(1);
      expect(left.t).toBeLessThanOrEqual(60);
      remaining.push(left.r!);
      expect(res.headers).not.toHaveProperty('x-ratelimit-limit');
      expect(res.headers).not.toHaveProperty('ratelimit-remaining');
    }
    expect(remaining).toEqual([4, 3, 2, 1, 0]);
    const limited = await t.request({ url: '/api/v1/users/1', remoteAddress: ip });
    expectRateLimited(limited, 'default');
    expect(limited.headers['x-request-id']).toBe(limited.body.requestId);
  });

  it('when a successful request is limited, then its 2xx carries the fields too', async () => {
    const ip = freshIp();
    const username = uniqueName();
    const res = await t.request({
      method: 'POST',
      url: '/api/v1/users',
      remoteAddress: ip,
      payload: { username, email: `${username}@example.com`, password: 'long-enough-pw' },
    });
    expect(res.status).toBe(201);
    expect(parseList(res.headers.ratelimit).default).toEqual({ r: 4, t: expect.any(Number) });
  });

  it('when a user with a token has used up their quota, then other users and anonymous callers on the same address are unaffected', async () => {
    const ip = freshIp();
    const alice = await createUser(t);
    const bob = await createUser(t);
    for (let i = 0; i < 5; i++)
      expect(
        (await t.request({ url: `/api/v1/users/${alice.id}`, token: alice.token, remoteAddress: ip })).status,
      ).toBe(200);
    expectRateLimited(
      await t.request({ url: `/api/v1/users/${alice.id}`, token: alice.token, remoteAddress: ip }),
      'default',
    );
    // The user's bucket follows the user to another address.
    expectRateLimited(
      await t.request({ url: `/api/v1/users/${alice.id}`, token: alice.token, remoteAddress: freshIp() }),
      'default',
    );

    const other = await t.request({ url: `/api/v1/users/${bob.id}`, token: bob.token, remoteAddress: ip });
    expect(other.status).toBe(200);
    expect(parseList(other.headers.ratelimit).default!.r).toBe(4); // bob's sign-up and login counted against his address
    const anonymous = await t.request({ url: '/api/v1/users/1', remoteAddress: ip });
    expect(anonymous.status).toBe(401);
    expect(parseList(anonymous.headers.ratelimit).default!.r).toBe(4);
  });

  it('when an address has used up its quota, then a user calling from it with a token still gets through', async () => {
    const ip = freshIp();
    const carol = await createUser(t);
    for (let i = 0; i < 5; i++) await t.request({ url: '/api/v1/users/1', remoteAddress: ip });
    expectRateLimited(await t.request({ url: '/api/v1/users/1', remoteAddress: ip }), 'default');
    expect((await t.request({ url: `/api/v1/users/${carol.id}`, token: carol.token, remoteAddress: ip })).status).toBe(
      200,
    );
    // A forged token is no way around the address limit: it counts against the address.
    const forged = await t.request({
      url: '/api/v1/users/1',
      token: `${carol.token.slice(0, -4)}AAAA`,
      remoteAddress: ip,
    });
    expectRateLimited(forged, 'default');
  });

  it('when a username is guessed at from many addresses, then the username is limited across them', async () => {
    const victim = await createUser(t); // their own login was the first of 3 attempts this minute
    const attempts = [];
    for (let i = 0; i < 3; i++) {
      attempts.push(
        await t.request({
          method: 'POST',
          url: '/api/v1/tokens',
          remoteAddress: freshIp(),
          payload: { username: victim.username.toUpperCase(), password: `guess-${i}` },
        }),
      );
    }
    expect(attempts.slice(0, 2).map((r) => r.status)).toEqual([401, 401]);
    expectRateLimited(attempts[2]!, 'tokens-username');
    expect(parseList(attempts[2]!.headers['ratelimit-policy'])).toMatchObject({
      'tokens-ip': { q: 3, w: 60 },
      'tokens-username': { q: 3, w: 60 },
    });
    // Even the right password waits: the limit is on attempts, not on failures.
    const right = await t.request({
      method: 'POST',
      url: '/api/v1/tokens',
      remoteAddress: freshIp(),
      payload: { username: victim.username, password: victim.password },
    });
    expectRateLimited(right, 'tokens-username');
  });

  it('when one address tries many usernames, then the address is limited', async () => {
    const ip = freshIp();
    const statuses = [];
    for (let i = 0; i < 4; i++) {
      const res = await t.request({
        method: 'POST',
        url: '/api/v1/tokens',
        remoteAddress: ip,
        payload: { username: uniqueName(), password: 'whatever-pw' },
      });
      statuses.push(res.status);
      if (i === 3) expectRateLimited(res, 'tokens-ip');
    }
    expect(statuses).toEqual([401, 401, 401, 429]);
    // The stricter limit is only on token issuance: the address may still use the rest of the API.
    expect((await t.request({ url: '/api/v1/users/1', remoteAddress: ip })).status).toBe(401);
  });

  it('when the token body is malformed, then the attempt still counts against the address', async () => {
    const ip = freshIp();
    for (let i = 0; i < 3; i++) {
      expect(
        (await t.request({ method: 'POST', url: '/api/v1/tokens', remoteAddress: ip, payload: '{"username":' })).status,
      ).toBe(400);
    }
    expectRateLimited(
      await t.request({
        method: 'POST',
        url: '/api/v1/tokens',
        remoteAddress: ip,
        payload: { username: 'x', password: 'y' },
      }),
      'tokens-ip',
    );
  });

  it('when the operational endpoints are called, then they are not limited and carry no RateLimit fields', async () => {
    const ip = freshIp();
    for (let i = 0; i < 7; i++) {
      const res = await t.request({ url: '/healthz', remoteAddress: ip });
      expect(res.status).toBe(200);
      expect(res.headers).not.toHaveProperty('ratelimit');
    }
  });
});

describe.each(engines)('rate limits behind a trusted proxy on %s', (engine) => {
  const t = useTestApp(engine, { env: { RATE_LIMIT_PER_MINUTE: '2', TRUST_PROXY: '127.0.0.1' } });

  it('when requests come through the proxy, then each client address named in X-Forwarded-For has its own bucket', async () => {
    const via = (client: string) =>
      t.request({ url: '/api/v1/users/1', remoteAddress: '127.0.0.1', headers: { 'x-forwarded-for': client } });
    expect((await via('203.0.113.7')).status).toBe(401);
    expect((await via('203.0.113.7')).status).toBe(401);
    expectRateLimited(await via('203.0.113.7'), 'default');
    expect((await via('203.0.113.8')).status).toBe(401);
  });

  it('when an untrusted peer sends X-Forwarded-For, then it is ignored and the peer address is the key', async () => {
    const spoof = (client: string) =>
      t.request({ url: '/api/v1/users/1', remoteAddress: '192.0.2.50', headers: { 'x-forwarded-for': client } });
    expect((await spoof('203.0.113.100')).status).toBe(401);
    expect((await spoof('203.0.113.101')).status).toBe(401);
    expectRateLimited(await spoof('203.0.113.102'), 'default');
  });
});
