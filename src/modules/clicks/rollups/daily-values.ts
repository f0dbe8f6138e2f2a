/**
 * The daily top-value sets (SPEC §15: referrers, user agents, browsers, systems, devices, countries, a user's
 * links), bounded per day: the values one group (a link's or user's kind on a day) adds, and the cap that keeps
 * at most MAX_VALUES_PER_DAY distinct values stored per group, the rest counted as OTHER_VALUE. The rollup plan
 * (rollup-plan.ts) makes the groups; both writers apply the cap.
 */

/** distinct values kept per link, day and kind; later new values count as OTHER_VALUE */
export const MAX_VALUES_PER_DAY = 100;
export const OTHER_VALUE = '(other)';

/**
 * Clicks per value of one group (a link's or user's kind on a day). Most groups of a transaction hold a single
 * value — under uniform traffic a link has about one click per window — so the first value is kept inline and
 * a Map is made only for a second one: a Map per group was most of the rollup plan's garbage (six per human click).
 */
export class ValueCounts implements Iterable<[string, number]> {
  private first: string | null = null;
  private firstClicks = 0;
  private more: Map<string, number> | null = null;

  add(value: string, clicks: number): void {
    if (this.first === null) {
      this.first = value;
      this.firstClicks = clicks;
    } else if (value === this.first) this.firstClicks += clicks;
    else {
      const more = (this.more ??= new Map());
      more.set(value, (more.get(value) ?? 0) + clicks);
    }
  }

  /** distinct values */
  get size(): number {
    return this.first === null ? 0 : 1 + (this.more?.size ?? 0);
  }

  *[Symbol.iterator](): Iterator<[string, number]> {
    if (this.first === null) return;
    yield [this.first, this.firstClicks];
    if (this.more !== null) yield* this.more;
  }
}

/**
 * Applies the cap to one group: values already stored for that (link, kind, day) keep counting (`isStored`);
 * new values are admitted while fewer than MAX_VALUES_PER_DAY are stored (`storedCount`, OTHER_VALUE not
 * included); the rest is added to OTHER_VALUE. This bounds the rows a top-10 query reads per day, however
 * many distinct (or hostile) values arrive. Returns the rows to add and the distinct count afterwards.
 */
export function capDailyGroup(
  group: { values: Iterable<[string, number]> },
  storedCount: number,
  isStored: (value: string) => boolean,
): { rows: Array<[value: string, clicks: number]>; distinct: number } {
  const rows: Array<[string, number]> = [];
  let distinct = storedCount;
  let other = 0;
  for (const [value, clicks] of group.values) {
    if (value === OTHER_VALUE) other += clicks;
    else if (isStored(value)) rows.push([value, clicks]);
    else if (distinct < MAX_VALUES_PER_DAY) {
      distinct += 1;
      rows.push([value, clicks]);
    } else other += clicks;
  }
  if (other > 0) rows.push([OTHER_VALUE, other]);
  return { rows, distinct };
}
