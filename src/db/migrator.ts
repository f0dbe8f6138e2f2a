import { Migrator, type Kysely, type Migration, type MigrationProvider } from 'kysely';
import type { Dialect } from './dialect.js';
import * as m001 from './migrations/001-users.js';
import * as m002 from './migrations/002-tokens.js';
import * as m003 from './migrations/003-orders.js';
import * as m004 from './migrations/004-links.js';
import * as m005 from './migrations/005-click-partitions.js';
import * as m008 from './migrations/008-link-management.js';
import * as m009 from './migrations/009-api-keys.js';
import * as m010 from './migrations/010-click-dimensions.js';
import * as m011 from './migrations/011-tokens-valid-after.js';
import * as m012 from './migrations/012-click-journal-marks.js';
import * as m013 from './migrations/013-click-journal-windows.js';
import * as m016 from './migrations/016-link-moderation.js';
import * as m017 from './migrations/017-deleted-link-clicks.js';
import * as m020 from './migrations/020-domains.js';
import * as m021 from './migrations/021-api-key-domains.js';
import * as m025 from './migrations/025-link-titles.js';
import * as m026 from './migrations/026-imports.js';
import * as m027 from './migrations/027-link-changes.js';
import * as m028 from './migrations/028-link-aliases.js';
import * as m030 from './migrations/030-click-domains.js';
import * as m032 from './migrations/032-import-hardening.js';
import * as m033 from './migrations/033-repair-imported-values.js';
import * as m034 from './migrations/034-domain-claims.js';
import * as m035 from './migrations/035-domain-retired-codes.js';
import * as m036 from './migrations/036-import-sources.js';
import * as m037 from './migrations/037-job-leases.js';
import * as m038 from './migrations/038-outbox.js';
import * as m039 from './migrations/039-link-search.js';
import * as m040 from './migrations/040-link-rules.js';
import * as m041 from './migrations/041-rule-clicks.js';
import * as m042 from './migrations/042-app-links-previews.js';
import * as m043 from './migrations/043-events.js';
import * as m044 from './migrations/044-webhooks.js';
import * as m045 from './migrations/045-totp-audit.js';
import * as m046 from './migrations/046-oidc.js';
import * as m047 from './migrations/047-click-retention.js';
import * as m048 from './migrations/048-link-health.js';
import * as m049 from './migrations/049-events-bus.js';
import * as m050 from './migrations/050-owner-totals.js';
import * as m051 from './migrations/051-token-generation.js';
import * as m052 from './migrations/052-webhook-after-event.js';
import * as m053 from './migrations/053-click-time-index.js';
import * as m054 from './migrations/054-webhook-pending-index.js';
import * as m055 from './migrations/055-link-search-short.js';
import * as m056 from './migrations/056-link-click-order.js';
import * as m057 from './migrations/057-link-search-pairs.js';
import * as m058 from './migrations/058-compact-click-events.js';
import * as m059 from './migrations/059-link-search-text.js';
import * as m060 from './migrations/060-link-triggers-planned.js';
import * as m061 from './migrations/061-click-rows-unchecked.js';

type MigrationModule = { up(db: Kysely<unknown>, d: Dialect): Promise<void> };

/** Numbered, forward-only migrations, written once for both engines (differences come from the Dialect). */
const migrations: Record<string, MigrationModule> = {
  '001-users': m001,
  '002-tokens': m002,
  '003-orders': m003,
  '004-links': m004,
  '005-click-partitions': m005,
  '008-link-management': m008,
  '009-api-keys': m009,
  '010-click-dimensions': m010,
  '011-tokens-valid-after': m011,
  '012-click-journal-marks': m012,
  '013-click-journal-windows': m013,
  '016-link-moderation': m016,
  '017-deleted-link-clicks': m017,
  '020-domains': m020,
  '021-api-key-domains': m021,
  '025-link-titles': m025,
  '026-imports': m026,
  '027-link-changes': m027,
  '028-link-aliases': m028,
  '030-click-domains': m030,
  '032-import-hardening': m032,
  '033-repair-imported-values': m033,
  '034-domain-claims': m034,
  '035-domain-retired-codes': m035,
  '036-import-sources': m036,
  '037-job-leases': m037,
  '038-outbox': m038,
  '039-link-search': m039,
  '040-link-rules': m040,
  '041-rule-clicks': m041,
  '042-app-links-previews': m042,
  '043-events': m043,
  '044-webhooks': m044,
  '045-totp-audit': m045,
  '046-oidc': m046,
  '047-click-retention': m047,
  '048-link-health': m048,
  '049-events-bus': m049,
  '050-owner-totals': m050,
  '051-token-generation': m051,
  '052-webhook-after-event': m052,
  '053-click-time-index': m053,
  '054-webhook-pending-index': m054,
  '055-link-search-short': m055,
  '056-link-click-order': m056,
  '057-link-search-pairs': m057,
  '058-compact-click-events': m058,
  '059-link-search-text': m059,
  '060-link-triggers-planned': m060,
  '061-click-rows-unchecked': m061,
};

/** Every migration this build knows, in order. */
export const MIGRATION_NAMES: readonly string[] = Object.keys(migrations);

/**
 * Numbers are reserved per change while several land at once, so a database may have a later number applied
 * before an earlier one arrives (a build with 025 ran before 020 landed): the earlier one then still runs.
 * Each migration therefore depends only on what the numbers below 020 made, never on the others' order.
 */
const ORDER = { allowUnorderedMigrations: true } as const;

class StaticProvider implements MigrationProvider {
  constructor(private readonly dialect: Dialect) {}
  async getMigrations(): Promise<Record<string, Migration>> {
    return Object.fromEntries(
      Object.entries(migrations).map(([name, m]) => [name, { up: (db: Kysely<unknown>) => m.up(db, this.dialect) }]),
    );
  }
}

/**
 * Applies every pending migration. Kysely's migrator holds a lock while it runs (a transaction-level
 * advisory lock on PostgreSQL), so several instances starting at once apply each migration exactly once.
 */
export async function migrateToLatest(db: Kysely<unknown>, dialect: Dialect): Promise<string[]> {
  const migrator = new Migrator({ db, provider: new StaticProvider(dialect), ...ORDER });
  const { error, results } = await migrator.migrateToLatest();
  if (error) throw error instanceof Error ? error : new Error(String(error));
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}

/** Applies pending migrations up to and including `name` (an upgrade tested from an older schema). */
export async function migrateUpTo(db: Kysely<unknown>, dialect: Dialect, name: string): Promise<void> {
  const { error } = await new Migrator({ db, provider: new StaticProvider(dialect), ...ORDER }).migrateTo(name);
  if (error) throw error instanceof Error ? error : new Error(String(error));
}

/** Names of migrations this build knows that the database has not applied (readiness). */
export async function pendingMigrations(db: Kysely<unknown>, dialect: Dialect): Promise<string[]> {
  const migrator = new Migrator({ db, provider: new StaticProvider(dialect), ...ORDER });
  const all = await migrator.getMigrations();
  return all.filter((m) => !m.executedAt).map((m) => m.name);
}
