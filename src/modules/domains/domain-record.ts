import type { DomainRow } from '../../db/types.js';
import { isoTime } from '../../lib/common.schemas.js';
import { STOP_AFTER_FAILING_MS } from './domain-registry.js';
import { httpPathOf, txtNameOf, txtValueOf } from './domain-verification.js';
import type { Domain } from './domains.schemas.js';
import { appLinkValue } from '../../lib/app-links.js';

export const domainEtag = (row: Pick<DomainRow, 'id' | 'version'>): string => `"domain-${row.id}-v${row.version}"`;

export type DomainStatus = Domain['status'];

export function domainStatus(row: Pick<DomainRow, 'verified_at' | 'failing_since'>, now: number): DomainStatus {
  if (row.verified_at === null) return 'pending';
  if (row.failing_since === null) return 'active';
  return now - row.failing_since >= STOP_AFTER_FAILING_MS ? 'stopped' : 'failing';
}

/** The API's view of a domain row (v1 names; the routes rename for v2); its status depends on `now`. */
export function domainRecord(row: DomainRow, now: number): Domain {
  const status = domainStatus(row, now);
  return {
    id: row.id,
    hostname: row.hostname,
    owner_id: row.owner_id,
    verified_at: row.verified_at === null ? null : isoTime(row.verified_at),
    verification: {
      txt_name: txtNameOf(row.hostname),
      txt_value: txtValueOf(row.token),
      http_path: httpPathOf(row.token),
    },
    scheme: row.scheme === 'http' || row.scheme === 'https' ? row.scheme : null,
    root_redirect: row.root_redirect,
    not_found_redirect: row.not_found_redirect,
    expired_redirect: row.expired_redirect,
    broken_redirect: row.broken_redirect,
    apple_app_site_association: appLinkValue(row.apple_app_site_association),
    android_asset_links: appLinkValue(row.android_asset_links),
    click_retention_days: row.click_retention_days ?? null,
    status,
    status_message: row.check_message,
    accepts_links: status !== 'stopped',
    last_checked_at: row.checked_at === null ? null : isoTime(row.checked_at),
    failing_since: row.failing_since === null ? null : isoTime(row.failing_since),
    created_at: isoTime(row.created_at),
    updated_at: isoTime(row.updated_at),
  };
}
