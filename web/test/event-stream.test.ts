import { describe, expect, it } from 'vitest';
import { parseEventStream } from '../src/api/event-stream';

describe('the live stream as the dashboard reads it', () => {
  it('when chunks end mid-message, then complete messages are parsed, comments skipped and the rest kept', () => {
    const e = { id: 'evt_1', type: 'link.clicked', timestamp: '2026-12-02T00:00:00.000Z', data: { n: 1 } };
    const first = parseEventStream(`: connected\n\nid: evt_1\ndata: ${JSON.stringify(e)}\n\nid: evt_2\ndata: {"id"`);
    expect(first.events).toEqual([e]);
    expect(first.rest).toBe('id: evt_2\ndata: {"id"');
    const second = parseEventStream(
      `${first.rest}:"evt_2","type":"link.created","timestamp":"t","data":{}}\n\n: heartbeat\n\n`,
    );
    expect(second.events.map((x) => x.id)).toEqual(['evt_2']);
    expect(second.rest).toBe('');
  });
});
