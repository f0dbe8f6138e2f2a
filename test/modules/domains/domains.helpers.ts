import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { expect } from 'vitest';
import { createTestApp, type ApiResponse, type Engine, type TestApp, type TestAppOptions } from '../../helpers/app.js';
import { startDnsServer, type TestDnsServer } from '../../helpers/dns-server.js';
import { useBeforeAll } from '../../helpers/fixtures.js';

export const DOMAINS = '/api/v1/domains';

/** A host name no other test uses. */
export const uniqueHost = (prefix = 'go'): string => `${prefix}-${randomBytes(4).toString('hex')}.example.test`;

export interface DomainTestApp {
  t: TestApp;
  dns: TestDnsServer;
  close(): Promise<void>;
}

/** An app whose domain verification asks a loopback DNS server of the test's own. */
export async function domainTestApp(engine: Engine, opts: TestAppOptions = {}): Promise<DomainTestApp> {
  const dns = await startDnsServer();
  const t = await createTestApp(engine, {
    ...opts,
    env: { PUBLIC_BASE_URL: 'https://fry.example', DNS_SERVERS: dns.address, ...opts.env },
  });
  return {
    t,
    dns,
    close: async () => {
      await t.close();
      await dns.close();
    },
  };
}

/** domainTestApp as the app of a describe block: started in a beforeAll, closed in an afterAll (see useTestApp). */
export function useDomainTestApp(engine: Engine, opts: TestAppOptions = {}): DomainTestApp {
  return useBeforeAll(
    'useDomainTestApp',
    () => domainTestApp(engine, opts),
    (d) => d.close(),
  );
}

export interface CreatedDomain {
  id: number;
  hostname: string;
  verification: { txt_name: string; txt_value: string; http_path: string };
}

export async function addDomain(
  t: TestApp,
  token: string,
  payload: Record<string, unknown> = {},
): Promise<CreatedDomain> {
  const res = await t.request({ method: 'POST', url: DOMAINS, token, payload: { hostname: uniqueHost(), ...payload } });
  expect(res.status, res.text).toBe(201);
  return res.body as CreatedDomain;
}

/** Publishes the domain's TXT record on the test's DNS server and verifies it through the API. */
export async function verifiedDomain(
  d: DomainTestApp,
  token: string,
  payload: Record<string, unknown> = {},
): Promise<CreatedDomain> {
  const domain = await addDomain(d.t, token, payload);
  d.dns.txt.set(domain.verification.txt_name, [domain.verification.txt_value]);
  const res: ApiResponse = await d.t.request({ method: 'POST', url: `${DOMAINS}/${domain.id}/verify`, token });
  expect(res.status, res.text).toBe(200);
  return domain;
}

/** A web server at a loopback address of its own, standing for a domain's current server (the HTTP proof's target). */
export interface DomainWebServer {
  /** connections accepted so far, and those still open */
  connections(): number;
  open(): number;
  close(): Promise<void>;
}

export async function startDomainWebServer(
  address: string,
  port: number,
  handler: (req: IncomingMessage, res: ServerResponse) => void,
): Promise<DomainWebServer> {
  const server = createServer(handler);
  let seen = 0;
  let open = 0;
  server.on('connection', (socket) => {
    seen += 1;
    open += 1;
    socket.on('close', () => {
      open -= 1;
    });
  });
  await new Promise<void>((resolve) => server.listen(port, address, resolve));
  return {
    connections: () => seen,
    open: () => open,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
