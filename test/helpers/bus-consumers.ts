import { connect as connectAmqp } from 'amqplib';
import { connect as connectNats } from 'nats';

/**
 * A receiver on the message bus of SPEC §22, as an operator's consumer would be: every event Ferry publishes, with
 * what the bus says of it (subject or routing key, the id header, persistence). Tests wait for what they expect
 * with `until` (woken by each message, no sleeps).
 */
export interface BusReceived {
  /** NATS: the subject; AMQP: the routing key */
  topic: string;
  /** NATS: `Nats-Msg-Id`; AMQP: `messageId` */
  id: string | undefined;
  /** AMQP: delivery mode 2 (NATS: undefined) */
  persistent?: boolean;
  contentType?: string | undefined;
  body: { id: string; type: string; timestamp: string; data: unknown };
  raw: string;
}

export interface BusConsumer {
  received: BusReceived[];
  /** Resolves once `check` holds for what was received, or fails after `timeoutMs` naming `what`. */
  until(what: string, check: (received: BusReceived[]) => boolean, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

function collector(): Pick<BusConsumer, 'received' | 'until'> & { push(r: BusReceived): void } {
  const received: BusReceived[] = [];
  let waiters: Array<() => void> = [];
  return {
    received,
    push(r) {
      received.push(r);
      for (const w of waiters) w();
    },
    until(what, check, timeoutMs = 20_000) {
      if (check(received)) return Promise.resolve();
      return new Promise((resolve, reject) => {
        const waiter = (): void => {
          if (!check(received)) return;
          clearTimeout(timer);
          waiters = waiters.filter((w) => w !== waiter);
          resolve();
        };
        const timer = setTimeout(() => {
          waiters = waiters.filter((w) => w !== waiter);
          reject(new Error(`timed out waiting for ${what}; received ${received.length} message(s)`));
        }, timeoutMs);
        waiters.push(waiter);
      });
    },
  };
}

/** Subscribes to `ferry.>` on the NATS server at `url`. */
export async function natsConsumer(url: string): Promise<BusConsumer> {
  const u = new URL(url);
  const nc = await connectNats({ servers: `${u.hostname}:${u.port || '4222'}` });
  const c = collector();
  const sub = nc.subscribe('ferry.>', {
    callback: (_err, msg) => {
      const raw = msg.string();
      c.push({ topic: msg.subject, id: msg.headers?.get('Nats-Msg-Id'), body: JSON.parse(raw), raw });
    },
  });
  await nc.flush(); // the subscription is registered before anything is published
  return {
    ...c,
    async close() {
      sub.unsubscribe();
      await nc.close();
    },
  };
}

/** A queue of its own bound to every routing key of the exchange `ferry.events` on the broker at `url`. */
export async function amqpConsumer(url: string): Promise<BusConsumer> {
  const model = await connectAmqp(url);
  const channel = await model.createChannel();
  // The same declaration as Ferry's: a mismatch (not durable, not topic) would fail here with PRECONDITION_FAILED.
  await channel.assertExchange('ferry.events', 'topic', { durable: true });
  const { queue } = await channel.assertQueue('', { exclusive: true, autoDelete: true });
  await channel.bindQueue(queue, 'ferry.events', '#');
  const c = collector();
  await channel.consume(
    queue,
    (msg) => {
      if (!msg) return;
      const raw = msg.content.toString('utf8');
      c.push({
        topic: msg.fields.routingKey,
        id: msg.properties.messageId as string | undefined,
        persistent: msg.properties.deliveryMode === 2,
        contentType: msg.properties.contentType as string | undefined,
        body: JSON.parse(raw),
        raw,
      });
    },
    { noAck: true },
  );
  return {
    ...c,
    async close() {
      await model.close();
    },
  };
}
