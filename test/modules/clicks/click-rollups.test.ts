import { describe, expect, it } from 'vitest';
import type { ClickEvent } from '../../../src/modules/clicks/event/click-event.js';
import { DAY_MS, planRollups } from '../../../src/modules/clicks/rollups/rollup-plan.js';
import { ValueCounts } from '../../../src/modules/clicks/rollups/daily-values.js';

const CHROME =
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36';
const FIREFOX = 'Mozilla/5.0 (X11; Linux x86_64; rv:121.0) Gecko/20100101 Firefox/121.0';

describe('ValueCounts', () => {
  it('when values are added, then it counts each distinct value once, in the order first seen, the first kept inline and the rest in a map', () => {
    const v = new ValueCounts();
    expect(v.size).toBe(0);
    expect([...v]).toEqual([]);
    v.add('a', 1);
    v.add('a', 2);
    expect(v.size).toBe(1);
    expect([...v]).toEqual([['a', 3]]);
    v.add('b', 1);
    v.add('c', 5);
    v.add('b', 1);
    v.add('a', 1);
    expect(v.size).toBe(3);
    expect([...v]).toEqual([
      ['a', 4],
      ['b', 2],
      ['c', 5],
    ]);
  });
});

describe('planRollups', () => {
  const day = Date.UTC(2026, 10, 24);
  const click = (
    linkId: number,
    at: number,
    userAgent: string | null,
    referrer: string | null,
    ip: string,
  ): ClickEvent => ({ linkId, shortCode: `c${linkId}`, clickedAt: at, ip, userAgent, referrer }) as ClickEvent;

  it('when clicks of two links over two days arrive, then each (link, kind, day) is one group with its values counted, in key order, and bots are in no group', () => {
    const plan = planRollups([
      click(2, day + 1000, CHROME, 'https://a.example/x', '10.0.0.1'),
      click(1, day + 2000, FIREFOX, null, '10.0.0.2'),
      click(2, day + 3000, FIREFOX, 'https://a.example/y', '10.0.0.3'),
      click(2, day + DAY_MS + 1, CHROME, 'https://b.example/', '10.0.0.1'),
      click(2, day + 4000, 'Googlebot/2.1 (+http://www.google.com/bot.html)', 'https://c.example/', '10.0.0.9'),
    ]);
    const groups = plan.daily.map((g) => [g.id, [...g.values]]);
    expect(groups.filter(([id]) => String(id).includes(':referrer:'))).toEqual([
      [`1:referrer:${day}`, [['(direct)', 1]]],
      [`2:referrer:${day}`, [['https://a.example', 2]]],
      [`2:referrer:${day + DAY_MS}`, [['https://b.example', 1]]],
    ]);
    expect(groups.filter(([id]) => String(id).startsWith('2:browser:'))).toEqual([
      [
        `2:browser:${day}`,
        [
          ['Chrome', 1],
          ['Firefox', 1],
        ],
      ],
      [`2:browser:${day + DAY_MS}`, [['Chrome', 1]]],
    ]);
    // Six kinds per (link, day) with a human click, sorted by link, kind, day.
    expect(plan.daily).toHaveLength(18);
    const keys = plan.daily.map((g) => [g.key.linkId, g.key.kind, g.key.dayStart] as const);
    expect(keys).toEqual(
      [...keys].sort((a, b) => a[0] - b[0] || (a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0) || a[2] - b[2]),
    );
    expect(plan.days.map((d) => [d.linkId, d.dayStart, d.humans])).toEqual([
      [1, day, 1],
      [2, day, 2],
      [2, day + DAY_MS, 1],
    ]);
    expect(plan.links.map((l) => [l.linkId, l.clicks, l.bots])).toEqual([
      [1, 1, 0],
      [2, 4, 1],
    ]);
  });
});
