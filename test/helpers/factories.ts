import { randomBytes } from 'node:crypto';
import { expect } from 'vitest';
import type { ApiResponse, TestApp } from './app.js';

let seq = 0;
/** A username and e-mail no other test uses. */
export function uniqueName(prefix = 'u'): string {
  seq += 1;
  return `${prefix}${seq}_${randomBytes(3).toString('hex')}`.slice(0, 32);
}

export interface CreatedUser {
  id: number;
  username: string;
  email: string;
  password: string;
  token: string;
}

/**
 * Signs a user up through the API and logs them in. The account is active unless `status` says otherwise, as
 * if an admin had approved the sign-up (REGISTRATION=approval leaves it pending, and a pending account creates
 * nothing); role and status are set through the repository, as the CLI or an admin would.
 */
export async function createUser(
  t: TestApp,
  opts: { role?: 'user' | 'admin'; status?: 'pending' | 'active' | 'suspended'; password?: string } = {},
): Promise<CreatedUser> {
  const username = uniqueName();
  const password = opts.password ?? 'correct-horse-battery';
  const email = `${username}@example.com`;
  const created = await t.request({ method: 'POST', url: '/api/v1/users', payload: { username, email, password } });
  if (created.status !== 201) throw new Error(`createUser: ${created.status} ${created.text}`);
  const id = created.body.id as number;
  const role = opts.role ?? 'user';
  const status = opts.status ?? 'active';
  if (role !== created.body.role || status !== created.body.status) {
    await t.storage.db.updateTable('users').set({ role, status }).where('id', '=', id).execute();
  }
  const token = opts.status === 'suspended' ? '' : await login(t, username, password);
  return { id, username, email, password, token };
}

export async function login(t: TestApp, username: string, password: string): Promise<string> {
  const res = await t.request({ method: 'POST', url: '/api/v1/tokens', payload: { username, password } });
  if (res.status !== 201) throw new Error(`login: ${res.status} ${res.text}`);
  return res.body.accessToken as string;
}

/** A desktop browser's User-Agent (isbot: a person). */
export const HUMAN_UA =
  'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/130.0.0.0 Safari/537.36';
/** A crawler's User-Agent (isbot: a bot). */
export const BOT_UA = 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)';

export interface CreatedLink {
  id: number;
  short_code: string;
  user_id: number | null;
  original_url: string;
}

/** POST /api/v1/links (anonymous unless `token` is given); fails the test unless the link was created. */
export async function createLink(
  t: TestApp,
  payload: Record<string, unknown> = {},
  token?: string,
): Promise<CreatedLink> {
  const res = await t.request({
    method: 'POST',
    url: '/api/v1/links',
    payload: { original_url: 'https://example.com/x', ...payload },
    ...(token ? { token } : {}),
  });
  expect(res.status, res.text).toBe(201);
  return res.body as CreatedLink;
}

/** How many links the database holds (deleted and expired ones are gone; their codes stay in link_codes). */
export async function linkCount(t: Pick<TestApp, 'storage'>): Promise<number> {
  return Number(
    (
      await t.storage.db
        .selectFrom('links')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .executeTakeFirstOrThrow()
    ).n,
  );
}

/**
 * GET /{code} as a person's browser makes it (JSON errors unless `headers` ask for HTML), from `remoteAddress`
 * when given. `code` may carry a query string.
 */
export function visit(
  t: TestApp,
  code: string,
  headers: Record<string, string> = {},
  remoteAddress?: string,
): Promise<ApiResponse> {
  return t.request({
    url: `/${code}`,
    headers: { 'user-agent': HUMAN_UA, ...headers },
    ...(remoteAddress ? { remoteAddress } : {}),
  });
}

/** The click records of a link, oldest first, once every queued click is written. */
export async function clickRecords(t: TestApp, linkId: number) {
  await t.app.clickQueue.flush();
  return t.storage.db.selectFrom('clicks').selectAll().where('link_id', '=', linkId).orderBy('id').execute();
}

/** How many click records a link has, as the database holds them now (queued clicks not included). */
export async function recordCount(t: Pick<TestApp, 'storage'>, linkId: number): Promise<number> {
  const row = await t.storage.db
    .selectFrom('clicks')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('link_id', '=', linkId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** A link's click records and its click_count, as the database holds them now (e.g. after a restart). */
export async function storedClickCounts(
  t: Pick<TestApp, 'storage'>,
  linkId: number,
): Promise<{ records: number; clickCount: number }> {
  const row = await t.storage.db
    .selectFrom('links')
    .select('click_count')
    .where('id', '=', linkId)
    .executeTakeFirstOrThrow();
  return { records: await recordCount(t, linkId), clickCount: Number(row.click_count) };
}

/** The same, once every queued click is written. */
export async function clickCounts(
  t: Pick<TestApp, 'app' | 'storage'>,
  linkId: number,
): Promise<{ records: number; clickCount: number }> {
  await t.app.clickQueue.flush();
  return storedClickCounts(t, linkId);
}
