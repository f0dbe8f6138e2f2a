/**
 * This instance's redirect cache as the links module sees it (modules/redirect owns it; the wiring hands it
 * over): every change of a link drops each of its names on its domain — code and aliases, before and after the
 * change — before it is answered, so the next visit reads the database. Other instances and processes hear of
 * the change through the outbox (db/outbox.ts).
 */
export interface VisitCache {
  forgetNames(domainId: number, names: readonly string[]): void;
}

/** Where no redirect is served (the CLI): running servers hear of changes through the outbox. */
export const NO_VISIT_CACHE: VisitCache = { forgetNames: () => undefined };
