/**
 * SPEC §22's live stream (GET /api/v1/events) read with a streaming fetch: unlike EventSource, fetch can send the
 * Authorization header. Messages are `id:` and `data:` lines ending in a blank line; comments (heartbeats) are
 * skipped. Reconnects after a drop with Last-Event-ID, a second later, until `signal` aborts.
 */
export interface StreamedEvent {
  id: string;
  type: string;
  timestamp: string;
  data: unknown;
}

/** The complete messages of `buffer`, and what is left of it (an unfinished message). */
export function parseEventStream(buffer: string): { events: StreamedEvent[]; rest: string } {
  const events: StreamedEvent[] = [];
  const blocks = buffer.split('\n\n');
  const rest = blocks.pop() ?? '';
  for (const block of blocks) {
    const data = block
      .split('\n')
      .filter((line) => line.startsWith('data:'))
      .map((line) => line.slice(5).trimStart())
      .join('\n');
    if (data) events.push(JSON.parse(data) as StreamedEvent);
  }
  return { events, rest };
}

export async function followEvents(opts: {
  token: () => string | null;
  types: readonly string[];
  onEvent: (e: StreamedEvent) => void;
  signal: AbortSignal;
}): Promise<void> {
  let lastId: string | null = null;
  while (!opts.signal.aborted) {
    try {
      const token = opts.token();
      const headers: Record<string, string> = { accept: 'text/event-stream' };
      if (token) headers.authorization = `Bearer ${token}`;
      if (lastId) headers['last-event-id'] = lastId;
      const res = await fetch(`/api/v1/events?types=${opts.types.join(',')}`, { headers, signal: opts.signal });
      // 400: the last id is past the retention; start from now
      if (res.status === 400 && lastId) {
        lastId = null;
        continue;
      }
      if (!res.ok || !res.body) return;
      const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
      let buffer = '';
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        const parsed = parseEventStream(buffer + value);
        buffer = parsed.rest;
        for (const e of parsed.events) {
          lastId = e.id;
          opts.onEvent(e);
        }
      }
    } catch {
      if (opts.signal.aborted) return;
    }
    await new Promise((resolve) => setTimeout(resolve, 1_000));
  }
}
