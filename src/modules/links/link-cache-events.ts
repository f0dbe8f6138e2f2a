import type { OutboxEvent } from '../../db/outbox.js';
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
