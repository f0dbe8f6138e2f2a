import type { AuditAction } from '../api/client';

/**
 * Each action of the audit log (SPEC §23) in words, in the order the filter lists them. A Record over the API's
 * own action type (openapi.d.ts): an action added to or removed from the document fails the type check until it
 * is named here, so the filter cannot drift from the server's list.
 */
export const ACTION_LABELS: Record<AuditAction, string> = {
  'auth.sign_in': 'Signed in',
  'auth.sign_in_failed': 'Sign-in refused',
  'auth.totp_enabled': 'Two-factor sign-in turned on',
  'auth.totp_disabled': 'Two-factor sign-in turned off',
  'user.role_changed': 'Role changed',
  'user.status_changed': 'Status changed',
  'api_key.created': 'API key created',
  'api_key.revoked': 'API key revoked',
  'webhook.created': 'Webhook created',
  'webhook.deleted': 'Webhook deleted',
  'domain.added': 'Domain added',
  'domain.verified': 'Domain verified',
  'domain.removed': 'Domain removed',
  'link.disabled': 'Link disabled',
  'import.started': 'Import started',
  'backup.created': 'Backup made',
  'backup.restored': 'Backup restored',
};

export const AUDIT_ACTIONS = Object.keys(ACTION_LABELS) as AuditAction[];
