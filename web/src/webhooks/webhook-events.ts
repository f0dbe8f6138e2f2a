import type { Webhook, WebhookEvent } from '../api/client';

/**
 * What each event type tells a receiver (SPEC §22), in the order the form lists them. A Record over the API's
 * own event type: a type added to the document fails the type check until it is described here.
 */
export const EVENT_LABELS: Record<WebhookEvent, string> = {
  'link.created': 'A link was created',
  'link.updated': 'A link was changed',
  'link.deleted': 'A link was deleted',
  'link.clicked': 'A link was visited (people only, unless bots are included)',
  'link.health_changed': "A link's destination started or stopped failing",
  'domain.verified': 'A domain was verified',
  'domain.failing': 'A verified domain stopped pointing here',
  'import.completed': 'An import finished',
};

export const EVENTS = Object.keys(EVENT_LABELS) as WebhookEvent[];

/** Whose events a hook hears, in words (an admin sees every user's hooks). */
export function hookScope(hook: Pick<Webhook, 'scope' | 'user_id'>, me: number): string {
  if (hook.scope === 'instance') return 'Instance-wide';
  return hook.user_id === me ? 'Your links and domains' : `The links and domains of user ${hook.user_id}`;
}

/** On, off by hand, or off by Ferry with its reason. */
export function hookState(hook: Pick<Webhook, 'enabled' | 'disabled_reason'>): string {
  if (hook.enabled) return 'On';
  return hook.disabled_reason ? `Off: ${hook.disabled_reason}` : 'Off';
}
