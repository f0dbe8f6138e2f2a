import { connect } from 'amqplib';
import type { BusConnection, BusMessage } from './event-bus-connection.js';

/**
 * The AMQP side of the bus (SPEC §22: `amqp://user:pass@host/vhost`, the default vhost without a path): a durable
 * topic exchange `ferry.events`, each event published under its type as the routing key, persistent, with the
 * event id as `messageId`, on a confirm channel: a batch is confirmed once RabbitMQ has acknowledged every
 * message of it (a persistent message routed to a durable queue: once written to disk).
 */
export const AMQP_EXCHANGE = 'ferry.events';
const CONNECT_TIMEOUT_MS = 5_000;
/** a silent peer is found within a minute: RabbitMQ and the client both close after two missed heartbeats */
const HEARTBEAT_S = 20;

/** The URL as amqplib reads it, with a heartbeat unless the URL asks for another. */
export function amqpUrl(url: string): string {
  const u = new URL(url);
  if (!u.searchParams.has('heartbeat')) u.searchParams.set('heartbeat', String(HEARTBEAT_S));
  return u.toString();
}

export async function connectAmqp(url: string): Promise<BusConnection> {
  const model = await connect(amqpUrl(url), { timeout: CONNECT_TIMEOUT_MS, clientProperties: { product: 'Ferry' } });
  let closedNow!: () => void;
  const closed = new Promise<void>((resolve) => (closedNow = resolve));
  // An 'error' is followed by 'close'; without a listener it would be thrown.
  model.on('error', () => undefined);
  model.on('close', () => closedNow());
  try {
    const channel = await model.createConfirmChannel();
    channel.on('error', () => undefined);
    // A channel closed by the broker (a refused publish) leaves the connection open but useless to us.
    channel.on('close', () => {
      closedNow();
      void model.close().catch(() => undefined);
    });
    await channel.assertExchange(AMQP_EXCHANGE, 'topic', { durable: true });
    return {
      async publish(messages: readonly BusMessage[]): Promise<void> {
        for (const m of messages)
          channel.publish(AMQP_EXCHANGE, m.type, Buffer.from(m.body), {
            persistent: true,
            messageId: m.id,
            type: m.type,
            contentType: 'application/json',
            appId: 'ferry',
          });
        await channel.waitForConfirms();
      },
      closed,
      close: async () => {
        closedNow();
        await model.close().catch(() => undefined);
      },
    };
  } catch (err) {
    await model.close().catch(() => undefined);
    throw err;
  }
}
