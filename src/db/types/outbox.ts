import type { Generated } from 'kysely';

/** The typed outbox (migration 038, db/outbox.ts): one row per event, its payload JSON of the event's `data`. */
export interface OutboxTable {
  id: Generated<number>;
  type: string;
  payload: string;
  /** the app instance that made the change; null: every consumer applies it */
  origin: string | null;
  created_at: number;
}
