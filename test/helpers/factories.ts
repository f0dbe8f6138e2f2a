import { randomBytes } from 'node:crypto';
import type { TestApp } from './app.js';

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
export async function createUser(t: TestApp, opts: { role?: 'user' | 'admin'; status?: 'pending' | 'active' | 'suspended'; password?: string } = {}): Promise<CreatedUser> {
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
