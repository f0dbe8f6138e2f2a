import { describe, expect, it, vi } from 'vitest';
import { clickFacts } from '../../../src/modules/clicks/rollups/rollup-plan.js';
import { acceptedLanguages, visitContexts } from '../../../src/modules/redirect/visit-context.js';
import { engines } from '../../helpers/app.js';
import { useTestApp, useUser } from '../../helpers/fixtures.js';
import { UA } from '../clicks/user-agents.js';
import { clickRecords, createLink } from '../links/links.helpers.js';

describe('a visit context', () => {
  it('when its facts are read twice, then each is worked out once, on its first read', () => {
    const country = vi.fn(() => 'DE');
    const context = visitContexts(country)(
      'GET',
      '203.0.113.7',
      { 'user-agent': UA.chromeWindows, 'accept-language': 'de' },
      true,
    );
    expect(country).not.toHaveBeenCalled();
    expect(context.agentIfDescribed).toBeNull();
    const agent = context.agent;
    expect(context.agentIfDescribed).toBe(agent);
    expect(agent).toEqual({ isBot: false, browser: 'Chrome', os: 'Windows', device: 'desktop' });
    expect(context.agent).toBe(agent);
    expect([context.country, context.country]).toEqual(['DE', 'DE']);
    expect(country).toHaveBeenCalledTimes(1);
    expect(country).toHaveBeenCalledWith('203.0.113.7', expect.anything(), true);
    expect(context.languages).toBe(context.languages);
  });

  it.each([
    ['fr-CH, fr;q=0.9, en;q=0.8, de;q=0.7, *;q=0.5', ['fr-ch', 'fr', 'en', 'de']],
    ['en;q=0.5, DE', ['de', 'en']],
    ['en, nl;q=0, es;q=x', ['en', 'es']],
    ['', []],
    [undefined, []],
  ])('when Accept-Language is %j, then the languages are %j', (header, expected) => {
    const headers = header === undefined ? {} : { 'accept-language': header };
    expect(visitContexts(null)('GET', undefined, headers, false).languages).toEqual(expected);
    expect(acceptedLanguages(header)).toEqual(expected);
  });

  it('when a click carries the description of its user agent, then the writer takes it as it is', () => {
    const described = {
      linkId: 1,
      shortCode: 'a',
      clickedAt: 0,
      ip: null,
      userAgent: UA.chromeWindows,
      referrer: null,
      device: 'mobile' as const,
      browser: 'Described',
      os: null,
    };
    expect(clickFacts(described)).toEqual({
      isBot: false,
      browser: 'Described',
      os: null,
      device: 'mobile',
      country: null,
      countOnly: false,
    });
    expect(clickFacts({ ...described, device: 'bot' })).toMatchObject({ isBot: true, device: 'bot' });
    const { device: _d, browser: _b, os: _o, ...bare } = described;
    expect(clickFacts(bare)).toMatchObject({ isBot: false, browser: 'Chrome', os: 'Windows', device: 'desktop' });
  });
});

describe.each(engines)('the visit context of a redirect on %s', (engine) => {
  const t = useTestApp(engine);
  const owner = useUser(t);

  it('when a visit limit asked whether the visitor is a bot, then the click carries that description and the record says the same', async () => {
    const link = await createLink(t, { max_visits: 5 }, owner.token);
    const enqueue = vi.spyOn(t.app.clickQueue, 'enqueue');
    try {
      await t.request({ url: `/${link.short_code}`, headers: { 'user-agent': UA.safariIphone } });
      expect(enqueue).toHaveBeenCalledWith(
        expect.objectContaining({ device: 'mobile', browser: 'Mobile Safari', os: 'iOS' }),
      );
    } finally {
      enqueue.mockRestore();
    }
    expect(await clickRecords(t, link.id)).toEqual([
      expect.objectContaining({ device: 'mobile', browser: 'Mobile Safari', os: 'iOS' }),
    ]);
  });

  it('when nothing at the visit asked about the user agent, then the click leaves it to the writer, which describes it once', async () => {
    const link = await createLink(t);
    const enqueue = vi.spyOn(t.app.clickQueue, 'enqueue');
    try {
      await t.request({ url: `/${link.short_code}`, headers: { 'user-agent': UA.chromeWindows } });
      expect(enqueue).toHaveBeenCalledWith(expect.not.objectContaining({ device: expect.anything() }));
    } finally {
      enqueue.mockRestore();
    }
    expect(await clickRecords(t, link.id)).toEqual([
      expect.objectContaining({ device: 'desktop', browser: 'Chrome', os: 'Windows' }),
    ]);
  });
});
