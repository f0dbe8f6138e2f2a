import { describe, expect, it } from 'vitest';
import { hourlyFits, intervalChoices, periodLabel, queryFromView, viewFromQuery } from '../src/stats/stats-query';

const NOW = Date.parse('2026-11-23T15:30:00.000Z');
const view = (search: string) => viewFromQuery(new URLSearchParams(search), NOW);

describe('the analytics view in the URL', () => {
  it('when the URL says nothing, then the last 30 days by day', () => {
    expect(view('')).toMatchObject({ period: '30d', interval: 'day' });
    expect(queryFromView(view(''), NOW)).toEqual({
      from: '2026-10-24T15:30:00.000Z',
      to: '2026-11-23T15:30:00.000Z',
      interval: 'day',
      tz: 'UTC',
    });
  });

  it('when the period is the last 24 hours, then it is by hour unless the URL says otherwise', () => {
    expect(view('period=24h').interval).toBe('hour');
    expect(view('period=24h&interval=day').interval).toBe('day');
    expect(queryFromView(view('period=24h'), NOW).from).toBe('2026-11-22T15:30:00.000Z');
  });

  it("when the period is since creation, then no from/to and no interval: the API starts at the link's (or account's) creation and chooses the bucket size", () => {
    expect(view('period=all').interval).toBe('auto');
    expect(queryFromView(view('period=all'), NOW)).toEqual({ tz: 'UTC' });
    expect(queryFromView(view('period=all&interval=month'), NOW)).toEqual({ interval: 'month', tz: 'UTC' });
    expect(queryFromView(view('period=30d&interval=auto'), NOW)).toEqual({
      from: '2026-10-24T15:30:00.000Z',
      to: '2026-11-23T15:30:00.000Z',
      tz: 'UTC',
    });
    expect(periodLabel('all', 'link')).toBe('Since the link was created');
    expect(periodLabel('all', 'account')).toBe('Since the account was created');
  });

  it('when a window has more hours (or days) than one answer holds, then it is by day (or automatic) whatever the URL says', () => {
    expect(view('period=30d&interval=hour').interval).toBe('hour');
    expect(view('period=90d&interval=hour').interval).toBe('day');
    expect(view('period=all&interval=hour').interval).toBe('auto');
    expect(view('period=custom&from=2020-01-01&to=2026-11-01').interval).toBe('auto');
    expect(view('period=custom&from=2020-01-01&to=2026-11-01&interval=week').interval).toBe('week');
    expect(intervalChoices({ period: 'custom', from: '2020-01-01', to: '2026-11-01' })).toEqual([
      'auto',
      'week',
      'month',
    ]);
    expect(intervalChoices({ period: '7d', from: '', to: '' })).toEqual(['auto', 'hour', 'day', 'week', 'month']);
    expect(view('period=custom&from=2026-10-01&to=2026-11-10&interval=hour').interval).toBe('hour'); // 41 days: 984 hours
    expect(view('period=custom&from=2026-10-01&to=2026-11-11&interval=hour').interval).toBe('day');
    expect(hourlyFits({ period: '7d', from: '', to: '' })).toBe(true);
  });

  it('when the period is custom, then whole UTC days with the last day included', () => {
    expect(queryFromView(view('period=custom&from=2026-11-01&to=2026-11-03'), NOW)).toEqual({
      from: '2026-11-01T00:00:00.000Z',
      to: '2026-11-04T00:00:00.000Z',
      interval: 'day',
      tz: 'UTC',
    });
  });

  it('when the view names a time zone, then custom days are its days, across a daylight-saving change', () => {
    // Berlin leaves summer time on 2026-10-25: that day is 25 hours long.
    expect(queryFromView(view('period=custom&from=2026-10-24&to=2026-10-25&tz=Europe/Berlin'), NOW)).toEqual({
      from: '2026-10-23T22:00:00.000Z',
      to: '2026-10-25T23:00:00.000Z',
      interval: 'day',
      tz: 'Europe/Berlin',
    });
    expect(queryFromView(view('period=custom&from=2026-11-01&to=2026-11-01&tz=America/New_York'), NOW)).toMatchObject({
      from: '2026-11-01T04:00:00.000Z',
      to: '2026-11-02T05:00:00.000Z',
    });
    // Without tz in the URL, the browser's zone; an unknown one falls back to it too.
    expect(viewFromQuery(new URLSearchParams(''), NOW, 'Asia/Tokyo').tz).toBe('Asia/Tokyo');
    expect(viewFromQuery(new URLSearchParams('tz=Mars/Olympus'), NOW, 'Asia/Tokyo').tz).toBe('Asia/Tokyo');
    // "Today" for the custom default is the zone's date: 15:30 UTC is 00:30 of the next day in Tokyo.
    expect(viewFromQuery(new URLSearchParams(''), Date.parse('2026-11-23T15:30:00Z'), 'Asia/Tokyo').to).toBe(
      '2026-11-24',
    );
  });

  it('when a hand-edited URL holds nonsense, then the defaults, never an error', () => {
    expect(view('period=forever&interval=minute&from=yesterday&to=2026-13-45')).toEqual({
      period: '30d',
      interval: 'day',
      from: '2026-11-16',
      to: '2026-11-23',
      tz: 'UTC',
    });
  });
});
