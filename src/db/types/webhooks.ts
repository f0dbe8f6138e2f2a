import type { Generated } from 'kysely';

/** SPEC §22's webhooks (migration 044). */
export interface WebhooksTable {
  id: Generated<number>;
  /** who made it (and, for a `user` hook, whose events it hears) */
  user_id: number;
  scope: 'user' | 'instance';
  url: string;
  /** JSON array of event types */
  events: string;
  /** JSON array of domain ids, or null: every domain */
  domains: string | null;
  include_bots: number;
  description: string | null;
  enabled: Generated<number>;
  disabled_reason: string | null;
  /** the signing secret, encrypted (modules/webhooks/webhook-secret.ts) */
  secret: string;
  previous_secret: string | null;
  previous_secret_until: number | null;
  /** since when every attempt failed; null: the last one succeeded */
  failing_since: number | null;
  created_at: number;
  updated_at: number;
  /** the greatest events.id when it was made: it hears only the events after it */
  after_event: Generated<number>;
}

/** One attempt at delivering an event to a hook; pending while `attempted_at` is null. */
export interface WebhookDeliveriesTable {
  id: Generated<number>;
  webhook_id: number;
  event_id: string;
  event_type: string;
  /** the envelope's JSON, sent as the body */
  payload: string;
  /** `<webhook>:<event>` for the fan-out's rows (null for retries, redeliveries and tests) */
  fanout_key: string | null;
  /** 1 for the first attempt of a chain */
  attempt: number;
  /** when the chain's first attempt was due (the retry schedule counts from it) */
  first_due_at: number;
  due_at: number;
  /** a worker's lease on the pending attempt */
  claimed_until: number | null;
  attempted_at: number | null;
  status_code: number | null;
  duration_ms: number | null;
  error: string | null;
  response_body: string | null;
  next_attempt_at: number | null;
}

export interface WebhookPositionsTable {
  name: string;
  position: number;
}
