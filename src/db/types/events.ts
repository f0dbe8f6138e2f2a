import type { Generated } from 'kysely';

/**
 * SPEC §22's public events (migration 043, db/events.ts): one row per event, `payload` the whole envelope, or a
 * click's compact values (db/click-event-payload.ts).
 */
export interface EventsTable {
  /** the order consumers read in; the stream's position */
  id: Generated<number>;
  /** `evt_…`, what receivers see and deduplicate on */
  event_id: string;
  type: string;
  /** the owner of the link or domain it is about; null: the instance's (admins and instance-wide hooks) */
  user_id: number | null;
  domain_id: number | null;
  link_id: number | null;
  /** JSON of `{ id, type, timestamp, data }` */
  payload: string;
  created_at: number;
}

/** How far the message bus's publisher has published the events (migration 049, modules/events/bus-publisher.ts). */
export interface EventsBusPositionsTable {
  name: string;
  /** the events' position (`events.id`) up to which the bus confirmed every event */
  position: number;
  /** the greatest position published (at or past `position`: the ids between may still commit) */
  published: number;
  updated_at: number;
}
