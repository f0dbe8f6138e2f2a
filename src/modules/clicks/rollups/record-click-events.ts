import type { Transaction } from 'kysely';
import type { Dialect } from '../../../db/dialect.js';
import { recordPublicEvents } from '../../../db/events.js';
import type { Database } from '../../../db/types.js';
import type { ClickEvent } from '../event/click-event.js';
import { linkClickedInput, type ClickedLink } from './click-events.js';
import type { ClickFacts } from './rollup-plan.js';

/*
 * The PostgreSQL click writer's `link.clicked` events, through db/events.ts (Kysely). Apart from click-events.ts,
 * which the embedded writer's thread loads: that thread builds its events' rows itself and loads no Kysely.
 */

/** Writes the events of stored clicks (`ids`: their records' ids, in order) in the writer's transaction. */
export const recordClickEvents = (
  tx: Transaction<Database>,
  dialect: Pick<Dialect, 'notify'>,
  records: ReadonlyArray<readonly [ClickEvent, ClickFacts]>,
  ids: readonly number[],
  linksOf: ReadonlyMap<number, ClickedLink>,
): Promise<unknown> =>
  recordPublicEvents(
    tx,
    dialect,
    records.map(([e, f], i) => linkClickedInput(ids[i]!, e, f, linksOf.get(e.linkId)!)),
  );
