import type { FastifyBaseLogger } from 'fastify';
import type { Kysely } from 'kysely';
import { appModule } from '../../app-module.js';
import type { Dialect } from '../../db/dialect.js';
import type { Database } from '../../db/types.js';
import { createHostResolver, type ResolveHost } from '../../infra/outbound-address.js';
import { createOutboundHttp } from '../../infra/outbound-http.js';
import type { Clock } from '../../lib/clock.js';
import type { Paginator } from '../../lib/pagination.js';
import { createAttemptQueue } from './webhook-attempts.js';
import { createDispatcher } from './webhook-dispatcher.js';
import { createFanout } from './webhook-fanout.js';
import { createSecretBox } from './webhook-secret.js';
import { webhooksRoutes } from './webhooks.routes.js';
import { createWebhooksRepository } from './webhooks.repository.js';
import { webhookSchemas } from './webhooks.schemas.js';
import { createWebhooksService } from './webhooks.service.js';

export interface WebhooksModuleDeps {
  db: Kysely<Database>;
  dialect: Dialect;
  clock: Clock;
  paginator: Paginator;
  /** the instance's JWT secret: the hooks' secrets are sealed under a key derived from it */
  instanceSecret: Uint8Array;
  log: FastifyBaseLogger;
  /** WEBHOOK_ALLOW_PRIVATE */
  allowPrivate: boolean;
  /** WEBHOOK_CONCURRENCY */
  concurrency: number;
  /** DNS_SERVERS */
  dnsServers: readonly string[];
  /** another resolver (tests) */
  resolve?: ResolveHost;
  /** `Ferry-Webhooks/<version>` */
  userAgent: string;
  /** whether the process is busy serving: deliveries give way then (webhook-dispatcher.ts); never, without it */
  busy?: () => boolean;
  metrics?: {
    recordWebhookDelivery(outcome: 'delivered' | 'retried' | 'failed'): void;
    setWebhookBacklogProvider(provider: () => Promise<number>): void;
  };
}

/**
 * Webhooks (SPEC §22): the resource, the fan-out of the events table into deliveries, and the dispatcher that sends
 * them (signed, checked, retried): a serving process starts the dispatcher once it is built (app.ts), the CLI never
 * does; close stops it.
 */
export function createWebhooksModule(deps: WebhooksModuleDeps) {
  const secrets = createSecretBox(deps.instanceSecret);
  const resolve = deps.resolve ?? createHostResolver({ dnsServers: deps.dnsServers });
  const queue = createAttemptQueue({ db: deps.db, dialect: deps.dialect });
  // Deliveries go to few receivers, many times: their connections are kept (outbound-http.ts, keepAlive).
  const outbound = createOutboundHttp({ resolve, keepAlive: true });
  const dispatcher = createDispatcher({
    queue,
    fanout: createFanout({ db: deps.db, clock: deps.clock }),
    outbound,
    secrets,
    clock: deps.clock,
    log: deps.log,
    concurrency: deps.concurrency,
    allowPrivate: deps.allowPrivate,
    userAgent: deps.userAgent,
    ...(deps.busy ? { busy: deps.busy } : {}),
    ...(deps.metrics ? { onOutcome: (o) => deps.metrics!.recordWebhookDelivery(o) } : {}),
  });
  deps.metrics?.setWebhookBacklogProvider(() => queue.oldestWaitingSeconds(deps.clock.now()));
  const webhooks = createWebhooksService({
    repo: createWebhooksRepository(deps.db, deps.paginator),
    secrets,
    target: { resolve, allowPrivate: deps.allowPrivate },
    paginator: deps.paginator,
    clock: deps.clock,
    queued: () => dispatcher.wake(),
  });
  return appModule({
    webhooks,
    dispatcher,
    schemas: webhookSchemas,
    apiRoutes: async (api, { basePath, version }) => {
      if (version === 1) await api.register(webhooksRoutes, { webhooks, basePath });
    },
    close: async () => {
      await dispatcher.stop();
      outbound.close?.();
    },
  });
}

export type WebhooksModule = ReturnType<typeof createWebhooksModule>;
