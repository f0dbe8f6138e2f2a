import { connect, headers, type ConnectionOptions } from 'nats';
import type { BusConnection, BusMessage } from './event-bus-connection.js';

/**
 * The NATS side of the bus (SPEC §22: `nats://host:port`, subject `ferry.<type>`). Each event is published with
 * the header `Nats-Msg-Id: <event id>`, so a JetStream stream on `ferry.>` stores a re-published event once
 * (within its duplicate window); a flush (a PING the server answers after every message before it) is the
 * confirmation that the server has them. The client's own reconnection is off: event-bus.ts reconnects, so that
 * a connection that is down is seen as down, and nothing is buffered in memory meanwhile.
 */
export const NATS_SUBJECT_PREFIX = 'ferry.';
const CONNECT_TIMEOUT_MS = 5_000;

/** `nats://[user:pass@ | token@]host[:port]` as the client's options. */
export function natsOptions(url: string): ConnectionOptions {
  const u = new URL(url);
  const user = decodeURIComponent(u.username);
  const pass = decodeURIComponent(u.password);
  return {
    servers: `${u.hostname}:${u.port || '4222'}`,
    name: 'ferry-events',
    reconnect: false,
    timeout: CONNECT_TIMEOUT_MS,
    // a silent peer is found within a minute (two unanswered pings 20 s apart, then the close)
    pingInterval: 20_000,
    maxPingOut: 2,
    noEcho: true,
    ...(user && pass ? { user, pass } : user ? { token: user } : {}),
  };
}

export async function connectNats(url: string): Promise<BusConnection> {
  const nc = await connect(natsOptions(url));
  return {
    async publish(messages: readonly BusMessage[]): Promise<void> {
      for (const m of messages) {
        const h = headers();
        h.set('Nats-Msg-Id', m.id);
        nc.publish(`${NATS_SUBJECT_PREFIX}${m.type}`, m.body, { headers: h });
      }
      await nc.flush();
    },
    closed: nc.closed().then(() => undefined),
    close: () => nc.close(),
  };
}
