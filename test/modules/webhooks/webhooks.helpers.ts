import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { recordPublicEvents, type PublicEventInput } from '../../../src/db/events.js';
import type { TestApp } from '../../helpers/app.js';

/** A request a receiver got. */
export interface Received {
  headers: http.IncomingHttpHeaders;
  body: string;
  json: { id: string; type: string; timestamp: string; data: unknown };
}

/** How the receiver answers the next request (the last one given stays). */
export interface Answer {
  status: number;
  headers?: Record<string, string>;
  body?: string;
}

/**
 * A webhook receiver on loopback: records every request and answers from a script; `next(n)` resolves once it has
 * received n requests (tests wait on it, never on a timer).
 */
export interface Receiver {
  url: string;
  received: Received[];
  /** answers in order; once used up, the last one is repeated (default 204) */
  script: Answer[];
  next(count?: number): Promise<Received[]>;
  close(): Promise<void>;
}

/** `answer`, when given, decides each answer instead of the script (a receiver down until some time, say). */
export async function startReceiver(script: Answer[] = [], answer?: () => Answer): Promise<Receiver> {
  const waiters: Array<{ count: number; resolve: (r: Received[]) => void }> = [];
  const receiver: Receiver = {
    url: '',
    received: [],
    script,
    next(count = receiver.received.length + 1) {
      if (receiver.received.length >= count) return Promise.resolve(receiver.received.slice(0, count));
      return new Promise((resolve) => waiters.push({ count, resolve }));
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
  let answered = 0;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const chosen = answer?.() ?? receiver.script[Math.min(answered, receiver.script.length - 1)] ?? { status: 204 };
      answered += 1;
      res.writeHead(chosen.status, chosen.headers ?? {});
      res.end(chosen.body ?? '');
      receiver.received.push({ headers: req.headers, body, json: JSON.parse(body) as Received['json'] });
      for (const w of [...waiters])
        if (receiver.received.length >= w.count) {
          waiters.splice(waiters.indexOf(w), 1);
          w.resolve(receiver.received.slice(0, w.count));
        }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  return receiver;
}

/** Writes events as the change writers do (db/events.ts), and nudges the dispatcher. */
export async function writeEvents(t: TestApp, events: PublicEventInput[]): Promise<void> {
  await t.storage.db.transaction().execute((tx) => recordPublicEvents(tx, t.storage.dialect, events));
  t.app.webhookDispatcher.wake();
}

export const linkCreated = (userId: number | null, code = 'abc', domainId: number | null = null): PublicEventInput => ({
  type: 'link.created',
  userId,
  domainId,
  linkId: 1,
  data: { id: 1, short_code: code, original_url: 'https://example.com/' },
});

/** The app's own: a hook through the API, answering its secret and id. */
export async function createHook(
  t: TestApp,
  token: string,
  body: Record<string, unknown>,
): Promise<{ id: number; secret: string }> {
  const res = await t.request({ method: 'POST', url: '/api/v1/webhooks', token, payload: body });
  if (res.status !== 201) throw new Error(`createHook: ${res.status} ${res.text}`);
  return { id: res.body.id as number, secret: res.body.secret as string };
}

/** The hook's attempts as the API lists them (newest first). */
export async function deliveries(t: TestApp, token: string, id: number) {
  const res = await t.request({ url: `/api/v1/webhooks/${id}/deliveries?limit=100`, token });
  if (res.status !== 200) throw new Error(`deliveries: ${res.status} ${res.text}`);
  return res.body.data as Array<Record<string, unknown>>;
}

/** Waits until the dispatcher has recorded what it sent (tests read the log after the receiver got a request). */
export async function settle(t: TestApp): Promise<void> {
  await t.app.webhookDispatcher.tick();
  await t.app.webhookDispatcher.idle();
}

/** The attempts of enabled hooks due now and not made yet (what a settled dispatcher has none of). */
async function dueNow(t: TestApp): Promise<number> {
  const row = await t.storage.db
    .selectFrom('webhook_deliveries')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('attempted_at', 'is', null)
    .where('due_at', '<=', t.clock.now())
    .where('webhook_id', 'in', (eb) => eb.selectFrom('webhooks').select('id').where('enabled', '=', 1))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/**
 * Settles until no attempt is due at the test clock's now: a settle claims as many as the dispatcher has room for,
 * so a backlog larger than that takes several.
 */
export async function settleAllDue(t: TestApp): Promise<void> {
  do await settle(t);
  while ((await dueNow(t)) > 0);
}
