import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { engines, freshPostgresDatabase } from '../helpers/app.js';
import { ContractValidator, type OpenApiDoc } from '../helpers/contract.js';
import { parseResponse, rawExchange, sendAndReset, type RawResponse } from '../helpers/raw-http.js';
import { startServer, type ServerProcess } from '../helpers/server-process.js';

/** A parsed error envelope. */
type Envelope = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/**
 * SPEC §12 on a real socket: what Node's HTTP parser refuses is answered with its 4xx, the error envelope,
 * X-Request-Id and Connection: close; a client that resets mid-request leaves no error behind.
 */
describe.each(engines)('HTTP parser errors and resets on a real %s server', (engine) => {
  let server: ServerProcess;
  let contract: ContractValidator;
  let cleanup: () => Promise<void>;

  beforeAll(async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'ferry-parser-'));
    const env: Record<string, string> = {
      DATA_DIR: dataDir,
      JWT_SECRET: 'parser-test-secret-at-least-32-bytes-long',
      RATE_LIMIT_PER_MINUTE: '1000000',
    };
    let drop = async (): Promise<void> => undefined;
    if (engine === 'postgres') {
      const db = await freshPostgresDatabase();
      env.DATABASE_URL = db.url;
      drop = db.drop;
    }
    server = await startServer(env);
    contract = new ContractValidator((await (await fetch(`${server.baseUrl}/v3/api-docs`)).json()) as OpenApiDoc);
    cleanup = async () => {
      server.child.kill('SIGKILL');
      await server.exited;
      await drop();
      rmSync(dataDir, { recursive: true, force: true });
    };
  }, 120_000);
  afterAll(async () => cleanup());

  /** The answer is the envelope with this status and code, its requestId equal to X-Request-Id, and the connection closed. */
  function expectParserEnvelope(res: RawResponse, status: number, code: string, method = 'GET', url = '/'): Envelope {
    expect(res.status, res.text.slice(0, 300)).toBe(status);
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(res.headers.connection).toBe('close');
    const body = JSON.parse(res.body);
    expect(body.error.code).toBe(code);
    expect(body.requestId).toBe(res.headers['x-request-id']);
    expect(contract.check(method, url, res.status, res.headers['content-type'], res.body)).toEqual([]);
    return body;
  }

  it('when the method is not one HTTP defines, then 400 names the method', async () => {
    const res = await rawExchange(server.baseUrl, 'FOO /api/v1/users HTTP/1.1\r\nHost: x\r\n\r\n');
    const body = expectParserEnvelope(res, 400, 'VALIDATION_ERROR', 'FOO', '/api/v1/users');
    expect(body.error.details.map((d: { field: string }) => d.field)).toEqual(['method']);
  });

  it("when a header is 16 KB, then 431 in the envelope keeps the client's request id", async () => {
    const res = await rawExchange(
      server.baseUrl,
      `GET /healthz HTTP/1.1\r\nHost: x\r\nX-Request-Id: big-header-1\r\nX-Big: ${'a'.repeat(16 * 1024)}\r\n\r\n`,
    );
    expectParserEnvelope(res, 431, 'REQUEST_HEADERS_TOO_LARGE');
    expect(res.headers['x-request-id']).toBe('big-header-1');
  });

  it("when the URL is too long (past the target limit or past the parser's), then 414 names the path", async () => {
    for (const length of [9_000, 20_000]) {
      const res = await rawExchange(
        server.baseUrl,
        `GET /api/v1/links?q=${'a'.repeat(length)} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`,
      );
      const body = expectParserEnvelope(res, 414, 'URI_TOO_LONG', 'GET', '/api/v1/links');
      expect(body.error.details.map((d: { field: string }) => d.field)).toEqual(['path']);
    }
  });

  it.each([
    [
      'Content-Length with Transfer-Encoding',
      'POST /api/v1/users HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n',
      'Content-Length',
    ],
    [
      'two Content-Lengths',
      'POST /api/v1/users HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}',
      'Content-Length',
    ],
    ['a CR inside a header value', 'GET /healthz HTTP/1.1\r\nHost: x\r\nX-A: b\rc\r\n\r\n', 'headers'],
    ['a NUL inside a header value', 'GET /healthz HTTP/1.1\r\nHost: x\r\nX-A: b\u0000c\r\n\r\n', 'headers'],
  ])('when a request has %s, then 400 names it', async (_what, request, field) => {
    const res = await rawExchange(server.baseUrl, request);
    const body = expectParserEnvelope(res, 400, 'VALIDATION_ERROR');
    expect(body.error.details.map((d: { field: string }) => d.field)).toEqual([field]);
  });

  const chunked = (first: string) =>
    `POST /api/v1/links HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\nX-Request-Id: chunk-test-1\r\n\r\n${first}`;

  it('when a chunk size is larger than the body limit or not hexadecimal, then 400 names Transfer-Encoding at once and the connection closes', async () => {
    for (const size of ['FFFFFFFFFFFFFFFF', '10001', '1FFFFFFFFFFFFFFFF', 'zz', '-1']) {
      const started = Date.now();
      // Only the head, the size line and a few bytes: a server that waits for the chunk never answers (5 s here).
      const res = await rawExchange(server.baseUrl, chunked(`${size}\r\n{"original_url":`));
      const body = expectParserEnvelope(res, 400, 'VALIDATION_ERROR', 'POST', '/api/v1/links');
      expect(
        body.error.details.map((d: { field: string }) => d.field),
        size,
      ).toEqual(['Transfer-Encoding']);
      expect(Date.now() - started, size).toBeLessThan(4_000);
    }
    expect(server.logs.filter((l) => Number(l.level) >= 50)).toEqual([]);
  });

  it('when a later chunk, sent after the request began, declares more than the body limit, then 400 and the connection closes', async () => {
    const { hostname, port } = new URL(server.baseUrl);
    const socket = net.connect(Number(port), hostname);
    await once(socket, 'connect');
    const chunks: Buffer[] = [];
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.write(chunked('5\r\n{"ori\r\n'));
    await new Promise((resolve) => setTimeout(resolve, 200));
    socket.write('FFFFFFFF\r\nginal_url"');
    await Promise.race([once(socket, 'close'), new Promise((resolve) => setTimeout(resolve, 5_000))]);
    socket.destroy();
    const res = parseResponse(Buffer.concat(chunks).toString('utf8'));
    expect(res.headers['x-request-id']).toBe('chunk-test-1');
    expectParserEnvelope(res, 400, 'VALIDATION_ERROR', 'POST', '/api/v1/links');
  });

  it('when a chunked body is well formed (extensions, several chunks, trailers), then it is read as usual', async () => {
    const json = JSON.stringify({ original_url: 'https://example.com/chunked' });
    const [a, b] = [json.slice(0, 10), json.slice(10)];
    const res = await rawExchange(
      server.baseUrl,
      chunked(
        `${a.length.toString(16)};name=value\r\n${a}\r\n${b.length.toString(16).toUpperCase()}\r\n${b}\r\n0\r\nX-Trailer: 1\r\n\r\n`,
      ).replace('X-Request-Id', 'Connection: close\r\nX-Request-Id'),
    );
    expect(res.status, res.text).toBe(201);
    expect(JSON.parse(res.body).original_url).toBe('https://example.com/chunked');
  });

  it('when an HTTP/1.1 request has no Host, then 400 names Host; HTTP/1.0 needs none', async () => {
    const res = await rawExchange(server.baseUrl, 'GET /healthz HTTP/1.1\r\nConnection: close\r\n\r\n');
    expect(res.status).toBe(400);
    const body = JSON.parse(res.body);
    expect(body.error.code).toBe('VALIDATION_ERROR');
    expect(body.error.details).toEqual([{ field: 'Host', message: expect.any(String) }]);
    expect(body.requestId).toBe(res.headers['x-request-id']);
    expect(contract.check('GET', '/healthz', res.status, res.headers['content-type'], res.body)).toEqual([]);
    const old = await rawExchange(server.baseUrl, 'GET /healthz HTTP/1.0\r\n\r\n');
    expect(old.status).toBe(200);
  });

  it("when a request has more than one Host header, then 400 names Host, on an API route, a cached link the redirect's fast path would answer, and an unknown code", async () => {
    const body = JSON.stringify({ original_url: 'https://example.com/two-hosts' });
    const made = await fetch(`${server.baseUrl}/api/v1/links`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body,
    });
    expect(made.status).toBe(201);
    const code = ((await made.json()) as { short_code: string }).short_code;
    const once = async () =>
      rawExchange(server.baseUrl, `GET /${code} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
    expect((await once()).status).toBe(302); // and now cached: the next visit is the fast path's
    expect((await once()).status).toBe(302);
    const cases: Array<[string, string]> = [
      [`/${code}`, 'Host: x\r\nHost: evil.example'],
      [`/${code}`, 'host: x\r\nHOST: x'],
      ['/api/v1/links', 'Host: x\r\nHost: y'],
      ['/zz9zz9zz', 'Host: x\r\nHost: y'],
    ];
    for (const [url, hosts] of cases) {
      const res = await rawExchange(server.baseUrl, `GET ${url} HTTP/1.1\r\n${hosts}\r\nConnection: close\r\n\r\n`);
      expect(res.status, `${url} ${hosts}`).toBe(400);
      const answer = JSON.parse(res.body);
      expect(answer.error).toMatchObject({
        code: 'VALIDATION_ERROR',
        details: [{ field: 'Host', message: expect.any(String) }],
      });
      expect(answer.requestId).toBe(res.headers['x-request-id']);
      expect(res.headers.location).toBeUndefined();
      expect(contract.check('GET', url, res.status, res.headers['content-type'], res.body)).toEqual([]);
    }
    expect((await once()).status).toBe(302);
  });

  it(
    'when clients reset their connections mid-request, then nothing is logged as an error, /metrics shows no 5xx and the service answers',
    { timeout: 60_000 },
    async () => {
      const requests = [
        'GET /api/v1/users/me HTTP/1.1\r\nHost: x\r\n\r\n',
        'GET /api/v1/links?limit=5 HTTP/1.1\r\nHost: x\r\n\r\n',
        'POST /api/v1/users HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 200\r\n\r\n{"username":',
        'POST /api/v1/tokens HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 44\r\n\r\n{"username":"nobody","password":"whatever1"}',
        'GET /abcdefgh HTTP/1.1\r\nHost: x\r\n\r\n',
        'GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n',
        'GET /api/v1/us',
      ];
      for (let round = 0; round < 30; round += 1)
        await Promise.all(requests.map((r) => sendAndReset(server.baseUrl, r)));
      await new Promise((r) => setTimeout(r, 300));
      const health = await fetch(`${server.baseUrl}/healthz`);
      expect(health.status).toBe(200);
      const metrics = await (await fetch(`${server.baseUrl}/metrics`)).text();
      expect(metrics.split('\n').filter((l) => /status(_code)?="5\d\d"/.test(l) && !/ 0$/.test(l))).toEqual([]);
      expect(server.logs.filter((l) => Number(l.level) >= 50)).toEqual([]);
    },
  );
});
