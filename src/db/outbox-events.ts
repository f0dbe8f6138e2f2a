/**
 * The events of the outbox (db/outbox.ts): what changed, typed. Named as SPEC §22 names its events where §22 has
 * one (`link.created`, `link.updated`, `link.deleted`, `domain.verified`, `import.completed`); the others say
 * what §22's deliveries will need besides. `data` is snake_case JSON, as the v1 API writes; each event carries
 * what its consumers need to act (the link cache: the names a visit asks for), not the whole record.
 */

/** A link's names on its domain: its short code and its aliases, the keys a visit looks it up by. */
export interface LinkNames {
  link_id: number;
  domain_id: number;
  names: string[];
}

/** A link's fields that a change may touch: what a PATCH may change (modules/links/link-rows.ts LinkChanges). */
export type LinkField =
  | 'original_url'
  | 'expires_at'
  | 'max_visits'
  | 'forward_query'
  | 'password_hash'
  | 'tags'
  | 'title'
  | 'aliases'
  | 'disabled_at'
  | 'disabled_reason'
  | 'domain_id'
  | 'rules'
  | 'preview'
  /** SPEC §24: where a broken link's visits go */
  | 'fallback_url'
  /** SPEC §24: a check changed the link's health (broken or not decides where visits go), or a new destination reset it */
  | HealthField;

/** The columns of a link's health (SPEC §24): written by the checks, reset by a new destination, never sent. */
export type HealthField =
  | 'health_status'
  | 'health_failures'
  | 'health_since'
  | 'health_error'
  | 'health_http_status'
  | 'health_checked_at'
  | 'next_check_at';

/** A link created through the API, the CLI or a bulk request. */
export interface LinkCreated {
  type: 'link.created';
  data: LinkNames & { user_id: number | null };
}

/**
 * A link changed: a PATCH, disabled or enabled (moderation), aliases added or removed, moved to another domain.
 * `before`: its names and domain before the change (a removed alias, a move: names a visit no longer finds).
 */
export interface LinkUpdated {
  type: 'link.updated';
  data: LinkNames & { changed: LinkField[]; before: { domain_id: number; names: string[] } };
}

/** A link gone: deleted, or expired and swept. Its names are tombstones now. */
export interface LinkDeleted {
  type: 'link.deleted';
  data: LinkNames & { reason: 'deleted' | 'expired' };
}

/** Links written many at a time (an import's batch, SPEC §20): how many, on which domains, not which. */
export interface LinksImported {
  type: 'links.imported';
  data: { count: number; domain_ids: number[] };
}

/** A domain claimed, changed (its fallback, its state after a re-check), verified, or removed. */
export interface DomainEvent {
  type: 'domain.created' | 'domain.updated' | 'domain.verified' | 'domain.deleted';
  data: { domain_id: number };
}

/** An account created, changed (role, password, disabled, …) or deleted. */
export interface UserEvent {
  type: 'user.created' | 'user.updated' | 'user.deleted';
  data: { user_id: number };
}

/** An API key created or revoked (deleted). */
export interface ApiKeyEvent {
  type: 'api_key.created' | 'api_key.revoked';
  data: { api_key_id: number; user_id: number };
}

/** An import's run ended: done, failed, cancelled or interrupted (import_jobs.state). */
export interface ImportCompleted {
  type: 'import.completed';
  data: { import_id: number; owner_id: number | null; state: string };
}

export type OutboxEvent =
  LinkCreated | LinkUpdated | LinkDeleted | LinksImported | DomainEvent | UserEvent | ApiKeyEvent | ImportCompleted;

export type OutboxEventType = OutboxEvent['type'];

/** Every event type, for readers that check what they read (a row written by a later build may hold another). */
export const OUTBOX_EVENT_TYPES: ReadonlySet<string> = new Set<OutboxEventType>([
  'link.created',
  'link.updated',
  'link.deleted',
  'links.imported',
  'domain.created',
  'domain.updated',
  'domain.verified',
  'domain.deleted',
  'user.created',
  'user.updated',
  'user.deleted',
  'api_key.created',
  'api_key.revoked',
  'import.completed',
]);
