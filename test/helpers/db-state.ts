import { Writable } from 'node:stream';
import { expect } from 'vitest';
import type { TestApp } from './app.js';

/**
 * A fingerprint of what the users table holds: rows, the sum of versions (every change bumps one) and the
 * newest updated_at. Equal before and after a request means the request wrote nothing.
 */
export async function usersFingerprint(t: TestApp): Promise<string> {
  const row = await t.storage.db
    .selectFrom('users')
    .select((eb) => [
      eb.fn.countAll<number>().as('n'),
      eb.fn.sum<number>('version').as('v'),
      eb.fn.max('updated_at').as('u'),
    ])
    .executeTakeFirstOrThrow();
  return `${Number(row.n)}/${Number(row.v ?? 0)}/${Number(row.u ?? 0)}`;
}

export async function countRows(t: TestApp, table: 'users' | 'tokens' | 'revoked_tokens'): Promise<number> {
  const row = await t.storage.db
    .selectFrom(table)
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/**
 * What the tables kept beside `links` by triggers must follow besides creation and edits: `owner` deleted (the
 * foreign key sets their links' owner to null), then `link` deleted through the API with `token`.
 */
export async function orphanThenDelete(
  t: TestApp,
  owner: { id: number },
  link: { short_code: string },
  token: string,
): Promise<void> {
  await t.storage.db.deleteFrom('users').where('id', '=', owner.id).execute();
  const gone = await t.request({ method: 'DELETE', url: `/api/v1/links/${link.short_code}`, token });
  expect(gone.status, gone.text).toBe(204);
}

/** A writable stream that keeps pino's newline-delimited JSON lines, parsed. */
export function logCapture(): { stream: Writable; lines: Array<Record<string, unknown>> } {
  const lines: Array<Record<string, unknown>> = [];
  let pending = '';
  const stream = new Writable({
    write(chunk: Buffer | string, _enc, cb) {
      pending += chunk.toString();
      let nl: number;
      while ((nl = pending.indexOf('\n')) >= 0) {
        const line = pending.slice(0, nl);
        pending = pending.slice(nl + 1);
        if (line.trim()) lines.push(JSON.parse(line) as Record<string, unknown>);
      }
      cb();
    },
  });
  return { stream, lines };
}

export const ISO_UTC = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
