import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import net, { type AddressInfo } from 'node:net';
import { createSecureContext } from 'node:tls';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  createOutboundHttp,
  OutboundError,
  type OutboundFailure,
  type OutboundRequest,
} from '../../src/infra/outbound-http.js';
import { startDnsServer, type TestDnsServer } from '../helpers/dns-server.js';
import { connectTarget } from '../helpers/no-network.js';

/** A loopback HTTP server that counts the connections it saw. */
interface Served {
  server: Server;
  port: number;
  connections: () => number;
  close(): Promise<void>;
}

async function serve(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<Served> {
  let seen = 0;
  const server = createServer(handler);
  server.on('connection', () => {
    seen += 1;
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    server,
    port: (server.address() as AddressInfo).port,
    connections: () => seen,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

async function failure(promise: Promise<unknown>): Promise<OutboundError> {
  const err = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err, 'the request should have failed').toBeInstanceOf(OutboundError);
  return err as OutboundError;
}

describe('outbound requests (STYLE rule 16, SPEC §25)', () => {
  let dns: TestDnsServer;
  let echo: Awaited<ReturnType<typeof serve>>;
  let http: ReturnType<typeof createOutboundHttp>;
  const base = { deadlineMs: 5_000, maxBodyBytes: 64 * 1024 } satisfies Partial<OutboundRequest>;
  beforeAll(async () => {
    dns = await startDnsServer();
    echo = await serve((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => {
        body += c.toString();
      });
      req.on('end', () =>
        res.writeHead(200, { 'content-type': 'application/json', 'x-seen': 'yes' }).end(
          JSON.stringify({
            method: req.method,
            url: req.url,
            host: req.headers.host,
            auth: req.headers.authorization ?? null,
            body,
          }),
        ),
      );
    });
    http = createOutboundHttp({ dnsServers: [dns.address] });
  });
  afterAll(async () => {
    await echo.close();
    await dns.close();
  });

  it('when private addresses are allowed, then a name DNS_SERVERS resolves is asked with its Host, method, headers and body', async () => {
    dns.a.set('echo.example.test', '127.0.0.1');
    const res = await http.request({
      ...base,
      allowPrivate: true,
      url: `http://echo.example.test:${echo.port}/p?q=1`,
      method: 'POST',
      headers: { authorization: 'Bearer x' },
      body: 'hello',
    });
    expect(res.status).toBe(200);
    expect(res.headers['x-seen']).toBe('yes');
    const seen = JSON.parse(res.body.toString());
    expect(seen).toEqual({
      method: 'POST',
      url: '/p?q=1',
      host: `echo.example.test:${echo.port}`,
      auth: 'Bearer x',
      body: 'hello',
    });
    expect(res.truncated).toBe(false);
  });

  it.each([
    ['an IPv4 literal', (port: number) => `http://127.0.0.1:${port}/`],
    ['an IPv4 literal in hex', (port: number) => `http://0x7f000001:${port}/`],
    ['the IPv6 loopback', (port: number) => `http://[::1]:${port}/`],
    ['a mapped IPv6 form', (port: number) => `http://[::ffff:127.0.0.1]:${port}/`],
    ['a name DNS points at loopback', (port: number) => `http://loop.example.test:${port}/`],
  ])(
    'when the target is loopback as %s and private addresses are refused, then it is not allowed, no connection',
    async (_what, url) => {
      dns.a.set('loop.example.test', '127.0.0.1');
      const before = echo.connections();
      const err = await failure(http.request({ ...base, url: url(echo.port) }));
      expect(err.failure).toBe('address-not-allowed');
      expect(err.message).toBe('address not allowed');
      expect(echo.connections()).toBe(before);
    },
  );

  it.each([
    ['A', '10.1.2.3'],
    ['A', '169.254.169.254'],
    ['A', '100.64.0.1'],
    ['A', '224.0.0.1'],
    ['A', '0.0.0.0'],
    ['A', '192.168.1.1'],
    ['AAAA', 'fd00::1'],
    ['AAAA', 'fe80::1'],
    ['AAAA', '::ffff:127.0.0.1'],
    ['AAAA', '::ffff:10.0.0.1'],
    ['AAAA', '64:ff9b::a9fe:a9fe'],
  ] as const)(
    'when DNS answers %s %s, then the request is refused before any connection is tried',
    async (type, address) => {
      const name = `x${Math.random().toString(36).slice(2, 8)}.example.test`;
      (type === 'A' ? dns.a : dns.aaaa).set(name, address);
      const connect = vi.spyOn(net.Socket.prototype, 'connect');
      try {
        const err = await failure(http.request({ ...base, url: `http://${name}/` }));
        expect(err.failure).toBe('address-not-allowed');
        expect(err.message).not.toContain(address);
        expect(err.detail).toContain(address);
        // Connections to the URL's port only: the worker process is shared with the files before this one, whose
        // test databases are dropped after they end (db-templates.ts dropLater), each drop a new connection to 5432.
        expect(connect.mock.calls.filter((args) => connectTarget(args).port === 80)).toEqual([]);
      } finally {
        connect.mockRestore();
      }
    },
  );

  it('when a name has a public address and a private one, then it is refused: every address is checked', async () => {
    dns.a.set('mixed.example.test', ['203.0.113.7', '127.0.0.1']);
    const before = echo.connections();
    expect((await failure(http.request({ ...base, url: `http://mixed.example.test:${echo.port}/` }))).failure).toBe(
      'address-not-allowed',
    );
    dns.a.delete('mixed.example.test');
    dns.aaaa.set('mixed.example.test', ['2606:4700::1111', 'fd12::1']);
    expect((await failure(http.request({ ...base, url: `http://mixed.example.test:${echo.port}/` }))).failure).toBe(
      'address-not-allowed',
    );
    expect(echo.connections()).toBe(before);
  });

  it("when a name has no address, or DNS does not answer, then each says so without the resolver's address or error text", async () => {
    const none = await failure(http.request({ ...base, url: 'http://nothing.example.test/' }));
    expect([none.failure, none.message]).toEqual(['no-address', 'the name has no address']);
    dns.silent.add('mute.example.test');
    const started = Date.now();
    const mute = await failure(http.request({ ...base, deadlineMs: 800, url: 'http://mute.example.test/' }));
    expect([mute.failure, mute.message]).toEqual(['timeout', 'no answer in time']);
    expect(Date.now() - started).toBeLessThan(2_000);
    for (const err of [none, mute]) expect(err.message).not.toMatch(/127\.0\.0\.1|ENOTFOUND|ENODATA|\d{4,5}/);
  });

  it('when nothing listens, then "no answer" (the log detail has the address and the system error)', async () => {
    const closed = await serve(() => undefined);
    await closed.close();
    const err = await failure(http.request({ ...base, allowPrivate: true, url: `http://127.0.0.1:${closed.port}/` }));
    expect([err.failure, err.message]).toEqual(['unreachable', 'no answer']);
    expect(err.detail).toContain('ECONNREFUSED');
    expect(String(err)).not.toContain(String(closed.port));
  });

  it('when a peer sends its answer a byte at a time, then the one deadline ends it (not an idle timeout)', async () => {
    const trickle = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      const timer = setInterval(() => res.write('x'), 150);
      res.on('close', () => clearInterval(timer));
    });
    try {
      const started = Date.now();
      const err = await failure(
        http.request({ ...base, allowPrivate: true, deadlineMs: 1_000, url: `http://127.0.0.1:${trickle.port}/` }),
      );
      expect(err.failure).toBe('timeout');
      expect(Date.now() - started).toBeGreaterThanOrEqual(950);
      expect(Date.now() - started).toBeLessThan(1_800);
    } finally {
      await trickle.close();
    }
  });

  it('when a peer accepts and never answers, then the deadline ends it', async () => {
    const silent = await serve(() => undefined);
    try {
      const err = await failure(
        http.request({ ...base, allowPrivate: true, deadlineMs: 500, url: `http://127.0.0.1:${silent.port}/` }),
      );
      expect(err.failure).toBe('timeout');
    } finally {
      await silent.close();
    }
  });

  it('when the body is longer than allowed, then it fails "too-large", or is cut when the caller asks', async () => {
    const big = await serve((_req, res) => res.end('y'.repeat(10_000)));
    try {
      const url = `http://127.0.0.1:${big.port}/`;
      expect((await failure(http.request({ ...base, allowPrivate: true, maxBodyBytes: 1024, url }))).failure).toBe(
        'too-large',
      );
      const cut = await http.request({ ...base, allowPrivate: true, maxBodyBytes: 1024, onTooLarge: 'truncate', url });
      expect(cut.body.length).toBe(1024);
      expect(cut.truncated).toBe(true);
      const whole = await http.request({ ...base, allowPrivate: true, maxBodyBytes: 10_000, url });
      expect([whole.body.length, whole.truncated]).toEqual([10_000, false]);
    } finally {
      await big.close();
    }
  });

  it('when the caller stops it, then "cancelled"', async () => {
    const silent = await serve(() => undefined);
    try {
      const stop = new AbortController();
      const pending = http.request({
        ...base,
        allowPrivate: true,
        url: `http://127.0.0.1:${silent.port}/`,
        signal: stop.signal,
      });
      setTimeout(() => stop.abort(), 50);
      expect((await failure(pending)).failure).toBe('cancelled');
    } finally {
      await silent.close();
    }
  });

  describe('kept connections (keepAlive: webhooks)', () => {
    /** A server on `host` answering 200 with the request's method, that counts its connections. */
    async function serveOn(host: string, port = 0) {
      let seen = 0;
      const server = createServer((req, res) => {
        req.resume();
        req.on('end', () => res.end(`${host} ${req.method}`));
      });
      server.on('connection', () => (seen += 1));
      await new Promise<void>((resolve) => server.listen(port, host, resolve));
      const close = () =>
        new Promise<void>((resolve) => {
          server.closeAllConnections();
          server.close(() => resolve());
        });
      return { port: (server.address() as AddressInfo).port, connections: () => seen, close };
    }

    it('when requests follow one another to one address, then they share one connection; without keepAlive, one each', async () => {
      const target = await serveOn('127.0.0.1');
      const kept = createOutboundHttp({ dnsServers: [dns.address], keepAlive: true });
      try {
        const post = (client: typeof http) =>
          client.request({
            ...base,
            allowPrivate: true,
            method: 'POST',
            body: 'x',
            url: `http://127.0.0.1:${target.port}/`,
          });
        for (let i = 0; i < 3; i++) expect((await post(kept)).status).toBe(200);
        expect(target.connections()).toBe(1);
        for (let i = 0; i < 3; i++) expect((await post(http)).status).toBe(200);
        expect(target.connections()).toBe(4);
      } finally {
        kept.close?.();
        await target.close();
      }
    });

    it('when the name moves to another address, then the kept connection is left: the new one is checked and used', async () => {
      const first = await serveOn('127.0.0.1');
      const second = await serveOn('127.0.0.2', first.port);
      const kept = createOutboundHttp({ dnsServers: [dns.address], keepAlive: true });
      const url = `http://moving.example.test:${first.port}/`;
      try {
        dns.a.set('moving.example.test', '127.0.0.1');
        expect((await kept.request({ ...base, allowPrivate: true, url })).body.toString()).toBe('127.0.0.1 GET');
        dns.a.set('moving.example.test', '127.0.0.2');
        expect((await kept.request({ ...base, allowPrivate: true, url })).body.toString()).toBe('127.0.0.2 GET');
        expect([first.connections(), second.connections()]).toEqual([1, 1]);
        // and when the answer is an address that is not allowed, nothing is sent, kept connection or not
        dns.a.set('moving.example.test', '127.0.0.1');
        expect((await failure(kept.request({ ...base, url }))).failure).toBe('address-not-allowed');
        expect(first.connections()).toBe(1);
      } finally {
        kept.close?.();
        await first.close();
        await second.close();
      }
    });

    it('when the peer closed a kept connection as the next request went out, then it is made once more on a new one', async () => {
      // Answers the first request of a connection (keeping it open) and resets it at the second.
      let connections = 0;
      const server = net.createServer((socket) => {
        connections += 1;
        let requests = 0;
        socket.on('data', () => {
          requests += 1;
          if (requests === 1) socket.write('HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: keep-alive\r\n\r\nok');
          else socket.resetAndDestroy();
        });
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      const kept = createOutboundHttp({ dnsServers: [dns.address], keepAlive: true });
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
      try {
        expect((await kept.request({ ...base, allowPrivate: true, url })).status).toBe(200);
        expect((await kept.request({ ...base, allowPrivate: true, method: 'POST', body: 'x', url })).status).toBe(200);
        expect(connections).toBe(2);
      } finally {
        kept.close?.();
        await new Promise<void>((resolve) => server.close(() => resolve()));
      }
    });
  });

  describe('redirects', () => {
    let hops: Awaited<ReturnType<typeof serve>>;
    beforeAll(async () => {
      hops = await serve((req, res) => {
        const n = Number(/^\/(\d+)/.exec(req.url ?? '')?.[1] ?? 0);
        if (req.url === '/other-origin')
          return res.writeHead(307, { location: `http://127.0.0.1:${echo.port}/landed` }).end();
        if (req.url === '/see-other')
          return res.writeHead(303, { location: `http://127.0.0.1:${echo.port}/after-post` }).end();
        if (req.url === '/bad') return res.writeHead(302, { location: 'ftp://example.test/' }).end();
        if (n > 0) return res.writeHead(302, { location: `/${n - 1}` }).end('moved');
        res.end('arrived');
      });
    });
    afterAll(async () => hops.close());
    const at = (p: string) => `http://127.0.0.1:${hops.port}${p}`;

    it('when redirects are not asked for, then the 3xx is the answer', async () => {
      const res = await http.request({ ...base, allowPrivate: true, url: at('/2') });
      expect([res.status, res.headers.location, res.body.toString()]).toEqual([302, '/1', 'moved']);
    });

    it('when they are, then they are followed up to the limit, and past it "too-many-redirects"', async () => {
      const res = await http.request({ ...base, allowPrivate: true, maxRedirects: 3, url: at('/3') });
      expect([res.status, res.body.toString(), res.url]).toEqual([200, 'arrived', at('/0')]);
      const tooMany = await failure(http.request({ ...base, allowPrivate: true, maxRedirects: 2, url: at('/3') }));
      expect(tooMany.failure).toBe('too-many-redirects');
      expect(
        (await failure(http.request({ ...base, allowPrivate: true, maxRedirects: 2, url: at('/bad') }))).failure,
      ).toBe('bad-url');
    });

    it('when a redirect leaves the origin, then Authorization stays behind; a 303 after a POST goes on as a GET', async () => {
      const follow = { ...base, allowPrivate: true, maxRedirects: 1 };
      const landed = await http.request({
        ...follow,
        url: at('/other-origin'),
        headers: { authorization: 'Bearer secret' },
      });
      expect(JSON.parse(landed.body.toString())).toMatchObject({ method: 'GET', url: '/landed', auth: null });
      const after = await http.request({ ...follow, method: 'POST', body: 'form', url: at('/see-other') });
      expect(JSON.parse(after.body.toString())).toMatchObject({ method: 'GET', url: '/after-post', body: '' });
    });
  });

  describe('https', () => {
    let dir: string;
    let seen: string[];
    let tls: ReturnType<typeof createTlsServer>;
    let port: number;
    beforeAll(async () => {
      dir = mkdtempSync(path.join(tmpdir(), 'ferry-outbound-tls-'));
      execFileSync(
        'openssl',
        [
          'req',
          '-x509',
          '-newkey',
          'rsa:2048',
          '-nodes',
          '-days',
          '1',
          '-subj',
          '/CN=tls.example.test',
          '-keyout',
          path.join(dir, 'key.pem'),
          '-out',
          path.join(dir, 'cert.pem'),
        ],
        { stdio: 'ignore' },
      );
      seen = [];
      const credentials = {
        key: readFileSync(path.join(dir, 'key.pem')),
        cert: readFileSync(path.join(dir, 'cert.pem')),
      };
      const context = createSecureContext(credentials);
      const sni = (name: string, cb: (err: Error | null, ctx: typeof context) => void) => {
        seen.push(name);
        cb(null, context);
      };
      tls = createTlsServer({ ...credentials, SNICallback: sni }, (_req, res) => res.end('secret'));
      tls.on('tlsClientError', () => undefined);
      await new Promise<void>((resolve) => tls.listen(0, '127.0.0.1', resolve));
      port = (tls.address() as AddressInfo).port;
    });
    afterAll(async () => {
      await new Promise<void>((resolve) => tls.close(() => resolve()));
      rmSync(dir, { recursive: true, force: true });
    });

    it('when the host is a name, then TLS names it (SNI) and checks the certificate against it: an untrusted one fails "tls"', async () => {
      dns.a.set('tls.example.test', '127.0.0.1');
      const err = await failure(
        http.request({ ...base, allowPrivate: true, url: `https://tls.example.test:${port}/` }),
      );
      expect([err.failure, err.message]).toEqual(['tls' satisfies OutboundFailure, 'the TLS handshake failed']);
      expect(seen).toEqual(['tls.example.test']);
    });
  });
});
