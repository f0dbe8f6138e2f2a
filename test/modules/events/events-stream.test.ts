import { describe, expect, it } from 'vitest';
import type { AddressInfo } from 'node:net';
import { createTestApp, engines } from '../../helpers/app.js';
import { createUser } from '../../helpers/factories.js';
import { useTestApp, useUser } from '../../helpers/fixtures.js';

/**
 * SPEC §22's live stream, GET /api/v1/events over a real socket (fetch, streaming): the caller's events only,
 * `?types=`, resuming with Last-Event-ID, the heartbeat, and what a request without the stream's type gets.
 */

interface SseMessage {
  id?: string;
  data?: { id: string; type: string; data: Record<string, unknown> };
  comment?: string;
}

/** A stream being read: its messages as they arrive, and a wait for one that matches. */
function readStream(body: ReadableStream<Uint8Array>) {
  const messages: SseMessage[] = [];
  const waiters: Array<{ test: (m: SseMessage) => boolean; resolve: (m: SseMessage) => void }> = [];
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  const pump = (async () => {
    for (;;) {
      const { done, value } = await reader.read().catch(() => ({ done: true, value: undefined }));
      if (done) return;
      buffer += decoder.decode(value, { stream: true });
      let end;
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const m: SseMessage = {};
        for (const line of block.split('\n')) {
          if (line.startsWith(':')) m.comment = line.slice(1).trim();
          else if (line.startsWith('id: ')) m.id = line.slice(4);
          else if (line.startsWith('data: ')) m.data = JSON.parse(line.slice(6)) as SseMessage['data'];
        }
        messages.push(m);
        for (const w of [...waiters])
          if (w.test(m)) {
            waiters.splice(waiters.indexOf(w), 1);
            w.resolve(m);
          }
      }
    }
  })();
  return {
    messages,
    next: (test: (m: SseMessage) => boolean) =>
      new Promise<SseMessage>((resolve) => {
        const seen = messages.find(test);
        if (seen) resolve(seen);
        else waiters.push({ test, resolve });
      }),
    cancel: async () => {
      await reader.cancel().catch(() => undefined);
      await pump;
    },
  };
}

describe.each(engines)('the live event stream on %s', (engine) => {
  const t = useTestApp(engine, { deps: { eventStream: { heartbeatMs: 200, pollMs: 50 } } });
  const alice = useUser(t);
  const bob = useUser(t);
  const admin = useUser(t, { role: 'admin' });

  const base = async (): Promise<string> => {
    if (!t.app.server.listening) await t.app.listen({ port: 0, host: '127.0.0.1' });
    return `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
  };
  const open = async (token: string, query = '', headers: Record<string, string> = {}) => {
    const res = await fetch(`${await base()}/api/v1/events${query}`, {
      headers: { accept: 'text/event-stream', authorization: `Bearer ${token}`, ...headers },
    });
    return res;
  };
  const createLink = async (token: string, url: string) => {
    const res = await t.request({ method: 'POST', url: '/api/v1/links', token, payload: { original_url: url } });
    expect(res.status).toBe(201);
    return res.body as { id: number; short_code: string };
  };

  it('when a user and an admin listen, then each hears what is theirs to hear, as whole events with their ids', async () => {
    const a = await open(alice.token);
    const b = await open(bob.token);
    const all = await open(admin.token);
    expect(a.status).toBe(200);
    expect(a.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const [sa, sb, sall] = [readStream(a.body!), readStream(b.body!), readStream(all.body!)];
    await Promise.all([sa, sb, sall].map((s) => s.next((m) => m.comment === 'connected')));
    const link = await createLink(alice.token, 'https://example.com/alice');
    const mine = (m: SseMessage) => m.data?.type === 'link.created' && m.data.data.id === link.id;
    const heard = await sa.next(mine);
    expect(heard.id).toBe(heard.data!.id);
    expect(heard.data!.id).toMatch(/^evt_[A-Za-z0-9_-]{22}$/);
    expect(heard.data!.data).toMatchObject({ id: link.id, short_code: link.short_code, user_id: alice.id });
    await sall.next(mine);
    const bobs = await createLink(bob.token, 'https://example.com/bob');
    await sb.next((m) => m.data?.data.id === bobs.id);
    await sa.next((m) => m.comment === 'heartbeat' && sa.messages.indexOf(m) > sa.messages.indexOf(heard));
    expect(sa.messages.some((m) => m.data?.data.id === bobs.id)).toBe(false);
    expect(sb.messages.some(mine)).toBe(false);
    await Promise.all([sa, sb, sall].map((s) => s.cancel()));
  });

  it('when the stream asks for some types, then it hears only those, and an unknown type is a 400', async () => {
    const res = await open(alice.token, '?types=link.deleted');
    const s = readStream(res.body!);
    await s.next((m) => m.comment === 'connected');
    const link = await createLink(alice.token, 'https://example.com/types');
    expect(
      (await t.request({ method: 'DELETE', url: `/api/v1/links/${link.short_code}`, token: alice.token })).status,
    ).toBe(204);
    const gone = await s.next((m) => m.data !== undefined);
    expect(gone.data).toMatchObject({ type: 'link.deleted', data: { id: link.id, short_code: link.short_code } });
    await s.cancel();
    const bad = await t.request({
      url: '/api/v1/events?types=link.created,link.exploded',
      token: alice.token,
      headers: { accept: 'text/event-stream' },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe('VALIDATION_ERROR');
  });

  it('when a stream resumes with Last-Event-ID, then it hears what it missed first, then what comes', async () => {
    const first = await open(alice.token);
    const s1 = readStream(first.body!);
    await s1.next((m) => m.comment === 'connected');
    const one = await createLink(alice.token, 'https://example.com/one');
    const heard = await s1.next((m) => m.data?.data.id === one.id);
    await s1.cancel();
    const two = await createLink(alice.token, 'https://example.com/two');
    const resumed = await open(alice.token, '', { 'last-event-id': heard.id! });
    const s2 = readStream(resumed.body!);
    await s2.next((m) => m.data?.data.id === two.id);
    const three = await createLink(alice.token, 'https://example.com/three');
    await s2.next((m) => m.data?.data.id === three.id);
    const ids = s2.messages.filter((m) => m.data).map((m) => m.data!.data.id);
    expect(ids).toEqual([two.id, three.id]);
    await s2.cancel();
    const unknown = await t.request({
      url: '/api/v1/events',
      token: alice.token,
      headers: { accept: 'text/event-stream', 'last-event-id': 'evt_AAAAAAAAAAAAAAAAAAAAAA' },
    });
    expect(unknown.status).toBe(400);
  });

  it('when a link is visited, then its owner hears link.clicked without the address or the user agent', async () => {
    const res = await open(alice.token, '?types=link.clicked');
    const s = readStream(res.body!);
    await s.next((m) => m.comment === 'connected');
    const link = await createLink(alice.token, 'https://example.com/clicked');
    const visit = await t.app.inject({
      url: `/${link.short_code}`,
      headers: {
        'user-agent': 'Mozilla/5.0 (X11; Linux x86_64) Firefox/120.0',
        referer: 'https://News.example.org/a?b',
      },
    });
    expect(visit.statusCode).toBeLessThan(400);
    await t.app.clickQueue.flush();
    const clicked = await s.next((m) => m.data?.type === 'link.clicked');
    const data = clicked.data!.data as { click: Record<string, unknown>; link: Record<string, unknown> };
    expect(data.link).toEqual({
      id: link.id,
      short_code: link.short_code,
      domain: null,
      original_url: 'https://example.com/clicked',
    });
    expect(data.click).toMatchObject({
      short_code: link.short_code,
      referrer_host: 'news.example.org',
      bot: false,
      alias: null,
    });
    expect(typeof data.click.id).toBe('number');
    expect(JSON.stringify(clicked.data)).not.toContain('Firefox/120.0');
    expect(JSON.stringify(clicked.data)).not.toContain('127.0.0.1');
    await s.cancel();
  });

  it('when the request does not ask for text/event-stream, or has no credential, then it is refused in the envelope', async () => {
    const plain = await t.request({ url: '/api/v1/events', token: alice.token });
    expect(plain.status).toBe(406);
    expect(plain.body.error.code).toBe('NOT_ACCEPTABLE');
    const anonymous = await t.request({ url: '/api/v1/events', headers: { accept: 'text/event-stream' } });
    expect(anonymous.status).toBe(401);
  });

  it('when the app closes while a stream is being opened, then that stream ends too and the close is not held', async () => {
    // closes the block's app: the last test of the block that uses it
    const res = await open(alice.token);
    const s = readStream(res.body!);
    await s.next((m) => m.comment === 'connected');
    const closing = s.next((m) => m.comment?.startsWith('closing') === true);
    await t.close();
    await closing;
  });

  it('when the app closes with a stream open, then the stream ends and the close is not held', async () => {
    // an app of its own: closing the block's app here would leave the other tests none
    const own = await createTestApp(engine, { deps: { eventStream: { heartbeatMs: 200, pollMs: 50 } } });
    try {
      const user = await createUser(own);
      await own.app.listen({ port: 0, host: '127.0.0.1' });
      const res = await fetch(`http://127.0.0.1:${(own.app.server.address() as AddressInfo).port}/api/v1/events`, {
        headers: { accept: 'text/event-stream', authorization: `Bearer ${user.token}` },
      });
      const s = readStream(res.body!);
      await s.next((m) => m.comment === 'connected');
      await own.app.runJob('sweep-events');
      const closing = s.next((m) => m.comment?.startsWith('closing') === true);
      await own.close();
      await closing;
    } finally {
      await own.close();
    }
  });
});
