import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { useBeforeAll } from './fixtures.js';

/**
 * A local HTTP server standing in for another link service's API (Shlink, Kutt, Bitly): it answers only with
 * the right key in the given header (401 otherwise, as those APIs do) and hands each request to `route`, which
 * returns the JSON body, or null for a 404 (or a promise of either: a test can hold an answer back). Every request is recorded, so a test can check paging and headers.
 */
export interface SourceStub {
  url: string;
  requests: { path: string; query: URLSearchParams; headers: IncomingMessage['headers'] }[];
  close(): Promise<void>;
}

export async function startSourceStub(
  auth: { header: string; value: string },
  route: (path: string, query: URLSearchParams) => unknown,
): Promise<SourceStub> {
  const requests: SourceStub['requests'] = [];
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://stub');
    requests.push({ path: url.pathname, query: url.searchParams, headers: req.headers });
    const send = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    if (req.headers[auth.header.toLowerCase()] !== auth.value) return send(401, { error: 'invalid api key' });
    void Promise.resolve(route(url.pathname, url.searchParams)).then((body) =>
      body === null ? send(404, { error: 'not found' }) : send(200, body),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** startSourceStub as a fixture of a describe block: started in a beforeAll, closed in an afterAll (see useTestApp). */
export function useSourceStub(...args: Parameters<typeof startSourceStub>): SourceStub {
  return useBeforeAll(
    'useSourceStub',
    () => startSourceStub(...args),
    (stub) => stub.close(),
  );
}

/** Slices a list into the page a 1-based `page` and a size ask for. */
export const pageOf = <T>(all: T[], page: number, size: number): T[] => all.slice((page - 1) * size, page * size);
