import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUser } from '../helpers/factories.js';
import { missing, unless } from '../helpers/skip.js';
import { startDashboard, type Dashboard } from './dashboard-fixture.js';

type Rules = { rules: Array<{ id: string; conditions: unknown[]; target: Record<string, unknown> }> };

/**
 * Routing a visit in the dashboard (SPEC §21): the Rules editor (conditions, targets, a split whose weights must
 * sum to 100, order, the dry run), the by-rule and by-variant panels of a link's analytics, and the preview
 * fields of the new-link form with their drawn card. SQLite only, like the other browser tests.
 */
describe.skipIf(missing.chromium !== null)(unless(missing.chromium, 'the dashboard in Chromium: rules'), () => {
  let d: Dashboard;
  beforeAll(async () => {
    d = await startDashboard();
  });
  afterAll(async () => d?.close());

  it('when rules are added, a split is balanced, they are reordered and tried, then the API holds them in that order and visits follow them', async () => {
    const u = await createUser(d.t, { status: 'active' });
    const link = (
      await d.t.request({
        method: 'POST',
        url: '/api/v1/links',
        token: u.token,
        payload: { original_url: d.landingUrl },
      })
    ).body as { short_code: string };
    const code = link.short_code;
    const { page, watch } = await d.open();
    await d.signIn(page, u.username, u.password);
    await page.goto(`${d.origin}/app/links/${code}/rules`);
    await page.getByText('This link has no rules').waitFor();

    // Rule 1: German speakers go to /de.
    await page.getByRole('button', { name: 'Add a rule' }).click();
    await page.getByLabel('Rule 1 name').fill('German');
    await page.getByLabel('Rule 1 condition 1 type').selectOption('language');
    await page.getByLabel('Rule 1 condition 1 values').fill('de');
    await page.getByLabel('Rule 1 URL').fill(`${d.landingUrl}/de`);
    // Rule 2: visitors with ?ref=mail are split 60/30 — refused by the editor until the weights sum to 100.
    await page.getByRole('button', { name: 'Add a rule' }).click();
    await page.getByLabel('Rule 2 condition 1 type').selectOption('query');
    await page.getByLabel('Rule 2 condition 1 parameter').fill('ref');
    await page.getByLabel('Rule 2 condition 1 values').fill('mail');
    await page.getByLabel('A split (A/B test)').nth(1).check();
    await page.getByLabel('Rule 2 variant 1 URL').fill(`${d.landingUrl}/a`);
    await page.getByLabel('Rule 2 variant 1 weight').fill('60');
    await page.getByLabel('Rule 2 variant 2 URL').fill(`${d.landingUrl}/b`);
    await page.getByLabel('Rule 2 variant 2 weight').fill('30');
    await page.getByText('The weights sum to 90; they must sum to 100.').waitFor();
    await page.getByRole('button', { name: 'Save rules' }).click();
    await page.getByRole('alert').getByText('must sum to 100; nothing was saved').waitFor();
    const none = (await d.t.request({ url: `/api/v1/links/${code}/rules`, token: u.token })).body as Rules;
    expect(none.rules).toEqual([]);

    await page.getByLabel('Rule 2 variant 2 weight').fill('40');
    await page.getByText('The weights sum to 100.').waitFor();
    await page.getByRole('button', { name: 'Move rule 2 up' }).click();
    await page.getByRole('button', { name: 'Save rules' }).click();
    await page.getByRole('status').getByText('Rules saved.').waitFor();
    const saved = (await d.t.request({ url: `/api/v1/links/${code}/rules`, token: u.token })).body as Rules;
    expect(saved.rules.map((r) => r.conditions)).toEqual([
      [{ type: 'query', key: 'ref', match: 'equals', values: ['mail'] }],
      [{ type: 'language', values: ['de'] }],
    ]);
    expect(saved.rules[0]!.target).toMatchObject({
      split: [
        { url: `${d.landingUrl}/a`, weight: 60 },
        { url: `${d.landingUrl}/b`, weight: 40 },
      ],
      sticky: true,
    });

    // The dry run names the rule a described visit meets, and records nothing.
    await page.getByLabel('Accept-Language').fill('de-DE,de;q=0.9');
    await page.getByRole('button', { name: 'Try it' }).click();
    await page.getByText(`Goes to ${d.landingUrl}/de (rule ${saved.rules[1]!.id})`).waitFor();

    // A visit the German rule routes is counted for it on the analytics screen.
    const visit = await fetch(`${d.origin}/${code}`, {
      redirect: 'manual',
      headers: {
        'accept-language': 'de',
        'user-agent': 'Mozilla/5.0 (X11; Linux x86_64) Chrome/140.0.0.0 Safari/537.36',
      },
    });
    expect(visit.headers.get('location')).toBe(`${d.landingUrl}/de`);
    await d.t.app.clickQueue.flush();
    await page.goto(`${d.origin}/app/links/${code}/stats`);
    const byRule = page.getByRole('region', { name: 'By rule' });
    await byRule.getByText(`Rule ${saved.rules[1]!.id}`).waitFor();
    await d.shot(page, 'link-rules-analytics');
    expect(await watch.settled()).toEqual([]);
  });

  it('when a new link is made with a preview, then the card is drawn as it is typed and the link keeps the preview', async () => {
    const u = await createUser(d.t, { status: 'active' });
    const { page, watch } = await d.open();
    await d.signIn(page, u.username, u.password);
    await page.goto(`${d.origin}/app/links/new`);
    await page.getByLabel('Destination URL').fill(`${d.landingUrl}?campaign=card`);
    await page.getByLabel('Preview title').fill('Winter sale');
    await page.getByLabel('Preview description').fill('Everything half price');
    await page.getByRole('figure', { name: 'Card preview' }).getByText('Winter sale').waitFor();
    await page.getByRole('button', { name: 'Create link' }).click();
    await page.getByRole('heading', { name: 'Link created' }).waitFor();
    const list = (await d.t.request({ url: '/api/v1/users/me/links', token: u.token })).body as {
      data: Array<{ preview: unknown }>;
    };
    expect(list.data).toMatchObject([{ preview: { title: 'Winter sale', description: 'Everything half price' } }]);
    expect(await watch.settled()).toEqual([]);
  });
});
