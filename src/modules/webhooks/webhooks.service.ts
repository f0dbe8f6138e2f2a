import { auditActorOf } from '../../db/audit-log.js';
import { randomUUID } from 'node:crypto';
import { newEventId } from '../../db/event-ids.js';
import { AppError, notFound, validationError } from '../../lib/app-error.js';
import { isAdmin, type Caller } from '../../lib/caller.js';
import type { Clock } from '../../lib/clock.js';
import type { Paginator, PageResult } from '../../lib/pagination.js';
import { newWebhookSecret, type SecretBox } from './webhook-secret.js';
import { checkHookTarget, type TargetCheck } from './webhook-target.js';
import type { DeliveryRow, WebhookRow, WebhooksRepository } from './webhooks.repository.js';
import {
  WEBHOOK_SORT_COLUMNS,
  type DeliveryListQueryT,
  type Webhook,
  type WebhookCreate,
  type WebhookCreated,
  type WebhookDelivery,
  type WebhookListQueryT,
  type WebhookPatch,
} from './webhooks.schemas.js';

/** How long the previous secret still signs after a rotation (SPEC §22). */
export const PREVIOUS_SECRET_MS = 24 * 3_600_000;

export interface WebhooksServiceDeps {
  repo: WebhooksRepository;
  secrets: SecretBox;
  target: TargetCheck;
  paginator: Paginator;
  clock: Clock;
  /** a delivery was queued here: the dispatcher looks for due work now rather than at its next tick */
  queued: () => void;
}

const iso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());

export function toWebhook(row: WebhookRow): Webhook {
  return {
    id: Number(row.id),
    user_id: Number(row.user_id),
    scope: row.scope,
    url: row.url,
    events: JSON.parse(row.events) as Webhook['events'],
    domains: row.domains === null ? null : (JSON.parse(row.domains) as number[]),
    include_bots: Number(row.include_bots) === 1,
    description: row.description,
    enabled: Number(row.enabled) === 1,
    disabled_reason: row.disabled_reason,
    created_at: iso(Number(row.created_at))!,
    updated_at: iso(Number(row.updated_at))!,
  };
}

export function toDelivery(row: DeliveryRow): WebhookDelivery {
  const num = (v: number | null) => (v === null ? null : Number(v));
  const made = row.attempted_at !== null;
  return {
    id: Number(row.id),
    event_id: row.event_id,
    event_type: row.event_type,
    attempt: Number(row.attempt),
    attempted_at: iso(num(row.attempted_at)),
    status_code: num(row.status_code),
    duration_ms: num(row.duration_ms),
    error: row.error,
    response_body: row.response_body,
    next_attempt_at: iso(made ? num(row.next_attempt_at) : Number(row.due_at)),
  };
}

/** The hook, if the caller may manage it (its owner, or an admin); anybody else: 404, as elsewhere in the API. */
async function managed(repo: WebhooksRepository, id: number, caller: Caller): Promise<WebhookRow> {
  const row = await repo.findById(id);
  if (!row || (!isAdmin(caller) && Number(row.user_id) !== caller.userId)) throw notFound('Webhook');
  return row;
}

/** `domains`: the caller's own (or the default domain, 0); an admin's may be any domain. Stored as JSON. */
async function checkDomains(
  repo: WebhooksRepository,
  domains: readonly number[] | null | undefined,
  caller: Caller,
): Promise<string | null> {
  if (domains === undefined || domains === null) return null;
  const ids = [...new Set(domains)];
  const owners = await repo.domainOwners(ids.filter((d) => d !== 0));
  const bad = ids.filter((d) => d !== 0 && (!owners.has(d) || (!isAdmin(caller) && owners.get(d) !== caller.userId)));
  if (bad.length)
    throw validationError([{ field: 'domains', message: `${bad.join(', ')}: not a domain of this user` }]);
  return JSON.stringify(ids);
}

/** A delivery of `event` to the hook, due now: a test event, or a redelivery. */
async function queueDelivery(
  deps: WebhooksServiceDeps,
  hook: WebhookRow,
  event: { id: string; type: string; payload: string },
): Promise<WebhookDelivery> {
  if (Number(hook.enabled) !== 1) throw new AppError('CONFLICT', 'The webhook is disabled: enable it first');
  const now = deps.clock.now();
  const row = await deps.repo.insertDelivery({
    webhook_id: Number(hook.id),
    event_id: event.id,
    event_type: event.type,
    payload: event.payload,
    fanout_key: null,
    attempt: 1,
    first_due_at: now,
    due_at: now,
  });
  deps.queued();
  return toDelivery(row);
}

async function createHook(deps: WebhooksServiceDeps, input: WebhookCreate, caller: Caller): Promise<WebhookCreated> {
  const scope = input.scope ?? 'user';
  if (scope === 'instance' && !isAdmin(caller))
    throw new AppError('FORBIDDEN', 'Only an admin may create an instance-wide webhook');
  await checkHookTarget(input.url, deps.target);
  const domains = await checkDomains(deps.repo, input.domains, caller);
  const secret = newWebhookSecret();
  const now = deps.clock.now();
  const row = await deps.repo.insert(
    {
      user_id: caller.userId,
      scope,
      url: input.url,
      events: JSON.stringify(input.events),
      domains,
      include_bots: input.include_bots === true ? 1 : 0,
      description: input.description ?? null,
      enabled: 1,
      disabled_reason: null,
      secret: deps.secrets.seal(secret),
      previous_secret: null,
      previous_secret_until: null,
      failing_since: null,
      created_at: now,
      updated_at: now,
    },
    { action: 'webhook.created', actor: auditActorOf(caller), details: { url: input.url, scope }, at: now },
  );
  return { ...toWebhook(row), secret };
}

async function patchHook(deps: WebhooksServiceDeps, id: number, input: WebhookPatch, caller: Caller): Promise<Webhook> {
  const hook = await managed(deps.repo, id, caller);
  if (input.url !== undefined) await checkHookTarget(input.url, deps.target);
  const set: Parameters<WebhooksRepository['update']>[1] = { updated_at: deps.clock.now() };
  if (input.url !== undefined) set.url = input.url;
  if (input.events !== undefined) set.events = JSON.stringify(input.events);
  if (input.domains !== undefined) set.domains = await checkDomains(deps.repo, input.domains, caller);
  if (input.include_bots !== undefined) set.include_bots = input.include_bots ? 1 : 0;
  if (input.description !== undefined) set.description = input.description;
  if (input.enabled !== undefined) {
    set.enabled = input.enabled ? 1 : 0;
    // Re-enabled: the reason goes, and so does the failing streak that would disable it again at once.
    if (input.enabled) Object.assign(set, { disabled_reason: null, failing_since: null });
  }
  const row = await deps.repo.update(Number(hook.id), set);
  if (!row) throw notFound('Webhook');
  if (input.enabled) deps.queued();
  return toWebhook(row);
}

/** A new secret (shown once); the one it replaces still signs for 24 hours. */
async function rotateSecret(deps: WebhooksServiceDeps, id: number, caller: Caller): Promise<{ secret: string }> {
  const hook = await managed(deps.repo, id, caller);
  const secret = newWebhookSecret();
  const now = deps.clock.now();
  await deps.repo.update(Number(hook.id), {
    secret: deps.secrets.seal(secret),
    previous_secret: hook.secret,
    previous_secret_until: now + PREVIOUS_SECRET_MS,
    updated_at: now,
  });
  return { secret };
}

/** Queues a `webhook.test` event for the hook, whatever events it hears (never stored among the events). */
async function testHook(deps: WebhooksServiceDeps, id: number, caller: Caller): Promise<WebhookDelivery> {
  const hook = await managed(deps.repo, id, caller);
  const event = {
    id: newEventId(),
    type: 'webhook.test',
    timestamp: new Date(deps.clock.now()).toISOString(),
    data: { webhook_id: Number(hook.id), nonce: randomUUID() },
  };
  return queueDelivery(deps, hook, { id: event.id, type: event.type, payload: JSON.stringify(event) });
}

/** Reads and changes of hooks, their owner's or an admin's. */
export function createWebhooksService(deps: WebhooksServiceDeps) {
  const { repo, paginator } = deps;
  return {
    create: (input: WebhookCreate, caller: Caller) => createHook(deps, input, caller),
    get: async (id: number, caller: Caller): Promise<Webhook> => toWebhook(await managed(repo, id, caller)),

    async list(caller: Caller, query: WebhookListQueryT, requestUrl: string): Promise<PageResult<Webhook>> {
      const userId = isAdmin(caller) ? null : caller.userId;
      const list = paginator.resolve(query, WEBHOOK_SORT_COLUMNS, { user: userId });
      const { rows, total } = await repo.list(userId, list);
      return paginator.page(rows, list, total, requestUrl, toWebhook, (r) =>
        Number(r[list.sortColumn as 'id' | 'created_at']),
      );
    },

    patch: (id: number, input: WebhookPatch, caller: Caller) => patchHook(deps, id, input, caller),
    async remove(id: number, caller: Caller): Promise<void> {
      const hook = await managed(repo, id, caller);
      await repo.remove(Number(hook.id), {
        action: 'webhook.deleted',
        actor: auditActorOf(caller),
        target: { type: 'webhook', id: Number(hook.id) },
        details: { url: hook.url },
      });
    },
    rotateSecret: (id: number, caller: Caller) => rotateSecret(deps, id, caller),
    test: (id: number, caller: Caller) => testHook(deps, id, caller),

    async deliveries(id: number, query: DeliveryListQueryT, caller: Caller, requestUrl: string) {
      const hook = await managed(repo, id, caller);
      const list = paginator.resolve({ ...query, order: 'desc' }, { id: 'id' }, { hook: Number(hook.id) }, true);
      const rows = await repo.deliveries(Number(hook.id), list);
      return paginator.page(rows, list, null, requestUrl, toDelivery, (r) => Number(r.id));
    },

    /** The same event again, to the same hook, as a new chain of attempts due now (the same webhook-id). */
    async redeliver(id: number, deliveryId: number, caller: Caller): Promise<WebhookDelivery> {
      const hook = await managed(repo, id, caller);
      const past = await repo.findDelivery(Number(hook.id), deliveryId);
      if (!past) throw notFound('Delivery');
      return queueDelivery(deps, hook, { id: past.event_id, type: past.event_type, payload: past.payload });
    },
  };
}

export type WebhooksService = ReturnType<typeof createWebhooksService>;
