import type { AddressInfo } from 'node:net';
import { expect } from 'vitest';
import { createTestApp, type ApiResponse, type Engine, type TestApp } from '../../helpers/app.js';

export const LINKS = '/api/v1/links';
/** What a browser sends when it navigates. */
export const BROWSER_ACCEPT = 'text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,*/*;q=0.8';
/** A desktop browser's User-Agent (isbot: human). */
export const HUMAN_UA = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/130.0.0.0 Safari/537.36';
export const BOT_UA = 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)';

export interface CreatedLink {
  id: number;
  short_code: string;
  user_id: number | null;
  original_url: string;
}

/** POST /api/v1/links; fails the test unless the link was created. */
export async function createLink(t: TestApp, payload: Record<string, unknown> = {}, token?: string): Promise<CreatedLink> {
  const res = await t.request({ method: 'POST', url: LINKS, payload: { original_url: 'https://example.com/x', ...payload }, ...(token ? { token } : {}) });
  expect(res.status, res.text).toBe(201);
  return res.body as CreatedLink;
}

export function patchLink(t: TestApp, code: string, payload: unknown, opts: { token?: string; headers?: Record<string, string> } = {}): Promise<ApiResponse> {
  return t.request({ method: 'PATCH', url: `${LINKS}/${code}`, payload, ...opts });
}

/** A visit as a person's browser makes it (JSON errors unless `accept` says otherwise). */
export function visit(t: TestApp, code: string, headers: Record<string, string> = {}, remoteAddress?: string): Promise<ApiResponse> {
  return t.request({ url: `/${code}`, headers: { 'user-agent': HUMAN_UA, ...headers }, ...(remoteAddress ? { remoteAddress } : {}) });
}

export async function clickRecords(t: TestApp, linkId: number) {
  await t.app.clickQueue.flush();
  return t.storage.db.selectFrom('clicks').selectAll().where('link_id', '=', linkId).orderBy('id').execute();
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
