import type { LinkRow } from '../../db/types.js';
import type { Caller } from '../../lib/caller.js';

/**
 * What the clicks module needs of links: the link a caller may read, by code (404/403 as the links module
 * decides). Declared here, implemented by the links service and handed in by app.ts, so clicks does not
 * import links (links imports clicks for the click event and queue: one direction only).
 */
export interface LinkAccess {
  /** the link for its statistics: anyone for an anonymous link, else its owner or an admin */
  getForStats(code: string, caller: Caller | null): Promise<LinkRow>;
  /** the link for its click records: its owner or an admin */
  getForOwner(code: string, caller: Caller | null): Promise<LinkRow>;
}
