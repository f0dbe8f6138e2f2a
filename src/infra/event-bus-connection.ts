/**
 * What a connection to SPEC §22's message bus does, whichever the bus (event-bus-nats.ts, event-bus-amqp.ts);
 * event-bus.ts keeps one up.
 */

/** One event as the bus carries it: the envelope as JSON, under its type, named by its id. */
export interface BusMessage {
  /** `evt_…`: NATS's `Nats-Msg-Id` header (JetStream deduplicates on it), AMQP's `messageId` */
  id: string;
  /** the subject's (`ferry.<type>`) or the routing key's (`<type>`) */
  type: string;
  /** the envelope `{ id, type, timestamp, data }` as JSON, as webhooks send it */
  body: string;
}

/** An open connection to the bus. */
export interface BusConnection {
  /** Publishes the messages in order; resolves once the bus has confirmed every one (rejects: some may be lost). */
  publish(messages: readonly BusMessage[]): Promise<void>;
  /** resolves when the connection is lost or closed */
  readonly closed: Promise<void>;
  close(): Promise<void>;
}

export type BusConnector = (url: string) => Promise<BusConnection>;
