import type { FastifyBaseLogger } from 'fastify';
import type { OutboxEvent } from '../../db/outbox.js';
import type { OutboxFeedConsumer } from '../../infra/outbox-feed.js';
import { linkCacheKey, type LinkCache } from './link-cache.js';

/**
 * What the redirect cache does with a link's event from another instance or process (infra/outbox-feed.ts): the
 * names the event names are forgotten on their domain (a changed link, a cached "missing" of a new name), and
 * before a change, the names it had then (a removed alias, a move to another domain). A batch of imported
 * links names no codes: every cached "missing" is forgotten. Other events are no business of the cache.
 */
export function forgetChangedLinks(cache: Pick<LinkCache, 'forget' | 'forgetMisses'>, event: OutboxEvent): void {
  switch (event.type) {
    case 'link.created':
    case 'link.deleted':
      for (const name of event.data.names) cache.forget(linkCacheKey(event.data.domain_id, name));
      return;
    case 'link.updated':
      for (const name of event.data.names) cache.forget(linkCacheKey(event.data.domain_id, name));
      for (const name of event.data.before.names) cache.forget(linkCacheKey(event.data.before.domain_id, name));
      return;
    case 'links.imported':
      cache.forgetMisses();
      return;
    default:
  }
}

/** What the visit reads of domains besides the cache: the registry, reloaded as domains change elsewhere. */
export interface ChangedDomains {
  reload(id: number): Promise<void>;
  reloadAll(): Promise<void>;
}

/**
 * The outbox's first consumer (db/outbox.ts): what a visit reads in memory — the link cache and the domain
 * registry — follows the changes of links and domains that other instances (PostgreSQL) or a CLI beside the
 * server (either engine) commit. This instance's own changes are applied by itself as it makes them.
 */
export function visitChangeConsumer(
  cache: Pick<LinkCache, 'forget' | 'forgetMisses' | 'clear' | 'gate'>,
  domains: ChangedDomains,
  log: FastifyBaseLogger,
): OutboxFeedConsumer {
  return {
    apply({ event }) {
      if (!event.type.startsWith('domain.')) return forgetChangedLinks(cache, event);
      const id = (event.data as { domain_id: number }).domain_id;
      // A failed reload is not fatal: the next restart of the feed reloads every domain.
      void domains
        .reload(id)
        .catch((err: unknown) => log.warn({ err, domain: id }, 'could not reload a changed domain'));
    },
    async restart() {
      cache.clear(); // whatever changed before the feed (re)started was not heard
      await domains.reloadAll();
    },
    gate: (isTrusted) => cache.gate(isTrusted),
  };
}
