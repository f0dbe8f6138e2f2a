import type { ApiKeysTable } from './types/api-keys.js';
import type {
  ClickIngestTable,
  ClickJournalMarksTable,
  ClicksTable,
  LinkClickDailyChoicesTable,
  LinkClickDailyValuesTable,
  LinkClickHourlyTable,
  LinkVisitorsTable,
  UserClickDailyValuesTable,
  UserClickHourlyTable,
} from './types/clicks.js';
import type { DomainsTable, RetiredDomainCodesTable } from './types/domains.js';
import type { EventsBusPositionsTable, EventsTable } from './types/events.js';
import type { IdempotencyKeysTable } from './types/idempotency.js';
import type { ImportItemsTable, ImportJobsTable, ImportLinksTable, ImportSourcesTable } from './types/imports.js';
import type { InstanceSettingsTable } from './types/instance.js';
import type { JobLeasesTable } from './types/jobs.js';
import type {
  LinkClickOrderTable,
  LinkCodesTable,
  LinkOwnerTagsTable,
  LinkOwnerTotalsTable,
  LinkSearchTextTable,
  LinksTable,
  LinkTagsTable,
} from './types/links.js';
import type { LoginCodesTable, UserIdentitiesTable } from './types/oidc.js';
import type { OrdersTable } from './types/orders.js';
import type { OutboxTable } from './types/outbox.js';
import type { RevokedTokensTable, TokensTable } from './types/tokens.js';
import type { AuditLogTable, UserRecoveryCodesTable, UserTotpTable } from './types/two-factor.js';
import type { UsersTable } from './types/users.js';
import type { WebhookDeliveriesTable, WebhookPositionsTable, WebhooksTable } from './types/webhooks.js';

/**
 * Table types, one file per module under types/. Every instant is stored as integer milliseconds since the epoch
 * (bigint on PostgreSQL, INTEGER on SQLite): the same comparisons, keyset cursors and bucket arithmetic work on
 * both engines, and the API turns them into ISO 8601 strings at the edge.
 */
export interface Database {
  domains: DomainsTable;
  retired_domain_codes: RetiredDomainCodesTable;
  users: UsersTable;
  tokens: TokensTable;
  revoked_tokens: RevokedTokensTable;
  orders: OrdersTable;
  idempotency_keys: IdempotencyKeysTable;
  link_codes: LinkCodesTable;
  links: LinksTable;
  link_tags: LinkTagsTable;
  link_owner_totals: LinkOwnerTotalsTable;
  link_owner_tags: LinkOwnerTagsTable;
  link_click_order: LinkClickOrderTable;
  link_search_text: LinkSearchTextTable;
  clicks: ClicksTable;
  link_click_hourly: LinkClickHourlyTable;
  link_click_daily_values: LinkClickDailyValuesTable;
  link_click_daily_choices: LinkClickDailyChoicesTable;
  link_visitors: LinkVisitorsTable;
  user_click_hourly: UserClickHourlyTable;
  user_click_daily_values: UserClickDailyValuesTable;
  click_ingest: ClickIngestTable;
  click_journal_marks: ClickJournalMarksTable;
  api_keys: ApiKeysTable;
  import_jobs: ImportJobsTable;
  import_items: ImportItemsTable;
  import_links: ImportLinksTable;
  import_sources: ImportSourcesTable;
  job_leases: JobLeasesTable;
  instance_settings: InstanceSettingsTable;
  outbox: OutboxTable;
  events: EventsTable;
  events_bus_positions: EventsBusPositionsTable;
  user_identities: UserIdentitiesTable;
  login_codes: LoginCodesTable;
  webhooks: WebhooksTable;
  webhook_deliveries: WebhookDeliveriesTable;
  webhook_positions: WebhookPositionsTable;
  user_totp: UserTotpTable;
  user_recovery_codes: UserRecoveryCodesTable;
  audit_log: AuditLogTable;
}

export type * from './types/api-keys.js';
export type * from './types/clicks.js';
export type * from './types/domains.js';
export type * from './types/events.js';
export type * from './types/idempotency.js';
export type * from './types/imports.js';
export type * from './types/instance.js';
export type * from './types/jobs.js';
export type * from './types/links.js';
export type * from './types/oidc.js';
export type * from './types/orders.js';
export type * from './types/tokens.js';
export type * from './types/two-factor.js';
export type * from './types/users.js';
export type * from './types/webhooks.js';
