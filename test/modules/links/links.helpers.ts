import type { AddressInfo } from 'node:net';
import { createTestApp, type ApiResponse, type Engine, type TestApp } from '../../helpers/app.js';

export const LINKS = '/api/v1/links';
/** What a browser sends when it navigates. */
export const BROWSER_ACCEPT = 'text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,*/*;q=0.8';
export { BOT_UA, clickRecords, createLink, HUMAN_UA, visit, type CreatedLink } from '../../helpers/factories.js';

export function patchLink(
  t: TestApp,
  code: string,
  payload: unknown,
  opts: { token?: string; headers?: Record<string, string> } = {},
): Promise<ApiResponse> {
  return t.request({ method: 'PATCH', url: `${LINKS}/${code}`, payload, ...opts });
}

/**
 * An app on a real socket, where cached visits take the redirect's fast path: without Redis even in the
 * scale-out run, since the fast path exists only with in-process rate limits (app.ts).
 */
export async function appOnSocket(engine: Engine): Promise<{ t: TestApp; base: string }> {
  const t = await createTestApp(engine, { redisUrl: '' });
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  return { t, base: `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}` };
}
