import type { RecordLinks } from './records/click-records.service.js';
import type { StatsLinks } from './stats/stats.service.js';

/**
 * What the clicks module needs of links: the link a caller may read, by code and domain (`?domain=`; absent:
 * the default domain), 404/403 as the links module
 * decides). Declared here (each part where it is used), implemented by the links service and handed in by
 * app.ts, so clicks does not import links (links imports clicks for the click event and queue: one direction only).
 */
export interface LinkAccess extends StatsLinks, RecordLinks {}
