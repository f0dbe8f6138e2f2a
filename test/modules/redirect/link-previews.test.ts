import { describe, expect, it } from 'vitest';
import { engines } from '../../helpers/app.js';
import { expectEnvelope } from '../../helpers/expect-envelope.js';
import { useTestApp, useUser } from '../../helpers/fixtures.js';
import { linkCount } from '../../helpers/factories.js';
import {
  appOnSocket,
  BOT_UA,
  clickRecords,
  createLink,
  HUMAN_UA,
  LINKS,
  patchLink,
  visit,
} from '../links/links.helpers.js';

/** The unfurlers SPEC §21 names, each by the user agent it sends. */
const UNFURLERS: Array<[string, string]> = [
  ['Slack', 'Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)'],
  ['Discord', 'Mozilla/5.0 (compatible; Discordbot/2.0; +https://discordapp.com)'],
  ['X/Twitter', 'Twitterbot/1.0'],
  ['Facebook', 'facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)'],
  ['Facebook (Facebot)', 'Facebot'],
  ['LinkedIn', 'LinkedInBot/1.0 (compatible; Mozilla/5.0; Apache-HttpClient +http://www.linkedin.com)'],
  ['WhatsApp', 'WhatsApp/2.23.20.0 A'],
  ['Telegram', 'TelegramBot (like TwitterBot)'],
  [
    'iMessage',
    'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_11_1) AppleWebKit/601.2.4 (KHTML, like Gecko) Version/9.0.1 Safari/601.2.4 facebookexternalhit/1.1 Facebot Twitterbot/1.0',
  ],
  ['Mastodon 4.0', 'http.rb/5.1.0 (Mastodon/4.0.2; +https://freiburg.social/) Bot'],
  ['Mastodon 4.2', 'Mastodon/4.2.1 (http.rb/5.1.1; +https://mastodon.social/) Bot'],
];
const SLACK = UNFURLERS[0]![1];

const PREVIEW = {
  title: 'Spring sale',
  description: 'Everything 20% off until Sunday',
  image_url: 'https://cdn.example.com/card.png',
};

/** The content of a meta tag (`property` or `name`), still HTML-escaped; undefined when the page has none. */
const metaOf = (html: string, key: string): string | undefined =>
  new RegExp(`<meta (?:property|name)="${key.replace('.', '\\.')}" content="([^"]*)">`).exec(html)?.[1];

describe.each(engines)('link previews for unfurlers on %s', (engine) => {
  const t = useTestApp(engine, { env: { PUBLIC_BASE_URL: 'https://fry.example' } });
  const owner = useUser(t);

  describe('the preview field', () => {
    it('when a link is created with a preview, then the link shows it, description and image null where not sent', async () => {
      const full = await t.request({
        method: 'POST',
        url: LINKS,
        token: owner.token,
        payload: { original_url: 'https://example.com/sale', preview: PREVIEW },
      });
      expect(full.status, full.text).toBe(201);
      expect(full.body.preview).toEqual(PREVIEW);
      const bare = await createLink(t, { preview: { title: '  Only a title  ' } }, owner.token);
      const read = await t.request({ url: `${LINKS}/${bare.short_code}`, token: owner.token });
      expect(read.body.preview).toEqual({ title: 'Only a title', description: null, image_url: null });
      const none = await createLink(t, {}, owner.token);
      expect((await t.request({ url: `${LINKS}/${none.short_code}`, token: owner.token })).body.preview).toBeNull();
    });

    it('when a PATCH sets, changes and clears the preview, then the link and its visits follow each time', async () => {
      const link = await createLink(t, { original_url: 'https://example.com/patched' }, owner.token);
      expect((await visit(t, link.short_code, { 'user-agent': SLACK })).status).toBe(302);
      const set = await patchLink(
        t,
        link.short_code,
        { preview: { title: 'Now with a card' } },
        { token: owner.token },
      );
      expect(set.status, set.text).toBe(200);
      expect(set.body.preview).toEqual({ title: 'Now with a card', description: null, image_url: null });
      const page = await visit(t, link.short_code, { 'user-agent': SLACK });
      expect(page.status).toBe(200);
      expect(metaOf(page.text, 'og:title')).toBe('Now with a card');
      const other = await patchLink(t, link.short_code, { title: 'unrelated' }, { token: owner.token });
      expect(other.body.preview).toEqual(set.body.preview);
      const cleared = await patchLink(t, link.short_code, { preview: null }, { token: owner.token });
      expect(cleared.body.preview).toBeNull();
      const after = await visit(t, link.short_code, { 'user-agent': SLACK });
      expect(after.status).toBe(302);
      expect(after.headers.location).toBe('https://example.com/patched');
    });

    it('when links are created in bulk with previews, then each keeps its own', async () => {
      const res = await t.request({
        method: 'POST',
        url: `${LINKS}/bulk`,
        token: owner.token,
        payload: {
          links: [
            { original_url: 'https://example.com/b1', preview: PREVIEW },
            { original_url: 'https://example.com/b2' },
            {
              original_url: 'https://example.com/b3',
              preview: { title: 'x', image_url: 'http://insecure.example/i.png' },
            },
          ],
        },
      });
      expect(res.status, res.text).toBe(200);
      expect(res.body.data.map((d: { status: number }) => d.status)).toEqual([201, 201, 400]);
      expect(res.body.data[0].link.preview).toEqual(PREVIEW);
      expect(res.body.data[1].link.preview).toBeNull();
      expect(res.body.data[2].error.details.map((d: { field: string }) => d.field)).toEqual(['preview.image_url']);
    });

    it('when v2 sends imageUrl, then it is stored and shown in camelCase, and its errors name v2 fields', async () => {
      const res = await t.request({
        method: 'POST',
        url: '/api/v2/links',
        token: owner.token,
        payload: {
          originalUrl: 'https://example.com/v2',
          preview: { title: 'Zwei', imageUrl: 'https://example.com/2.png' },
        },
      });
      expect(res.status, res.text).toBe(201);
      expect(res.body.preview).toEqual({ title: 'Zwei', description: null, imageUrl: 'https://example.com/2.png' });
      const v1 = await t.request({ url: `${LINKS}/${res.body.shortCode}`, token: owner.token });
      expect(v1.body.preview.image_url).toBe('https://example.com/2.png');
      const bad = await t.request({
        method: 'PATCH',
        url: `/api/v2/links/${res.body.shortCode}`,
        token: owner.token,
        payload: { preview: { title: 'Zwei', imageUrl: 'ftp://example.com/2.png' } },
      });
      expect(expectEnvelope(bad, 400, 'VALIDATION_ERROR')).toEqual(['preview.imageUrl']);
    });

    it.each([
      ['a title over 200 characters', { title: 'x'.repeat(201) }, 'preview.title'],
      ['an empty title', { title: '' }, 'preview.title'],
      ['a title of white space', { title: '   ' }, 'preview.title'],
      ['no title', { description: 'd' }, 'preview.title'],
      ['a description over 500 characters', { title: 't', description: 'd'.repeat(501) }, 'preview.description'],
      ['an http image', { title: 't', image_url: 'http://example.com/i.png' }, 'preview.image_url'],
      ['a relative image', { title: 't', image_url: '/i.png' }, 'preview.image_url'],
      ['a javascript: image', { title: 't', image_url: 'javascript:alert(1)' }, 'preview.image_url'],
      [
        'an image URL with credentials',
        { title: 't', image_url: 'https://u:p@example.com/i.png' },
        'preview.image_url',
      ],
      ['an image URL that does not parse', { title: 't', image_url: 'https://[::1/i.png' }, 'preview.image_url'],
      ['an unknown field', { title: 't', url: 'https://example.com' }, 'preview.url'],
      ['a control character', { title: 'a\u0007b' }, 'preview.title'],
    ])(
      'when a preview has %s, then 400 VALIDATION_ERROR names the field and nothing is created',
      async (_, preview, field) => {
        const before = await linkCount(t);
        const res = await t.request({
          method: 'POST',
          url: LINKS,
          token: owner.token,
          payload: { original_url: 'https://example.com/bad', preview },
        });
        expect(expectEnvelope(res, 400, 'VALIDATION_ERROR')).toContain(field);
        expect(await linkCount(t)).toBe(before);
      },
    );

    it('when a preview is a string or an array, then 400 and the link keeps its preview', async () => {
      const link = await createLink(t, { preview: PREVIEW }, owner.token);
      for (const preview of ['title', ['title'], 5]) {
        const res = await patchLink(t, link.short_code, { preview }, { token: owner.token });
        expect(expectEnvelope(res, 400, 'VALIDATION_ERROR')).toContain('preview');
      }
      expect((await t.request({ url: `${LINKS}/${link.short_code}`, token: owner.token })).body.preview).toEqual(
        PREVIEW,
      );
    });

    it('when the title and description are at their limits of 200 and 500 characters, then they are kept whole', async () => {
      const preview = { title: 'é'.repeat(200), description: '漢'.repeat(500) };
      const link = await createLink(t, { preview }, owner.token);
      const read = await t.request({ url: `${LINKS}/${link.short_code}`, token: owner.token });
      expect(read.body.preview).toEqual({ ...preview, image_url: null });
    });
  });

  describe('the visit', () => {
    it.each(UNFURLERS)(
      'when %s unfurls a link with a preview, then 200 text/html with the Open Graph and Twitter card tags',
      async (_, userAgent) => {
        const link = await createLink(t, { original_url: 'https://example.com/target', preview: PREVIEW }, owner.token);
        const res = await visit(t, link.short_code, { 'user-agent': userAgent });
        expect(res.status).toBe(200);
        expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
        expect(res.headers['cache-control']).toBe('private, no-store');
        expect(res.headers.vary).toContain('User-Agent');
        expect(res.headers.location).toBeUndefined();
        expect(res.text).toMatch(/^<!doctype html>/);
        expect(metaOf(res.text, 'og:url')).toBe(`https://fry.example/${link.short_code}`);
        expect(metaOf(res.text, 'og:title')).toBe(PREVIEW.title);
        expect(metaOf(res.text, 'og:description')).toBe(PREVIEW.description);
        expect(metaOf(res.text, 'og:image')).toBe(PREVIEW.image_url);
        expect(metaOf(res.text, 'twitter:card')).toBe('summary_large_image');
        expect(metaOf(res.text, 'twitter:title')).toBe(PREVIEW.title);
        expect(metaOf(res.text, 'twitter:image')).toBe(PREVIEW.image_url);
        // The target is not on the page: the card stands for the short link.
        expect(res.text).not.toContain('example.com/target');
      },
    );

    it('when the preview has no image, then twitter:card is summary and no image tag is written', async () => {
      const link = await createLink(t, { preview: { title: 'Plain' } }, owner.token);
      const res = await visit(t, link.short_code, { 'user-agent': SLACK });
      expect(metaOf(res.text, 'twitter:card')).toBe('summary');
      expect(metaOf(res.text, 'og:image')).toBeUndefined();
      expect(metaOf(res.text, 'og:description')).toBeUndefined();
    });

    it('when the preview holds quotes, angle brackets and <script>, then every value is escaped and no markup gets in', async () => {
      const hostile = {
        title: `"><script>alert('t')</script>`,
        description: `' onload='alert(1)' & <img src=x onerror=alert(2)>`,
        image_url: `https://cdn.example.com/i.png?a=1&b="><script>alert(3)</script>`,
      };
      const link = await createLink(t, { preview: hostile }, owner.token);
      const res = await visit(t, link.short_code, { 'user-agent': SLACK });
      expect(res.status).toBe(200);
      expect(res.text).not.toMatch(/<script/i);
      expect(res.text).not.toMatch(/<img/i);
      expect(res.text).not.toContain(`' onload='`);
      expect(metaOf(res.text, 'og:title')).toBe('&quot;&gt;&lt;script&gt;alert(&#39;t&#39;)&lt;/script&gt;');
      expect(metaOf(res.text, 'og:description')).toBe(
        '&#39; onload=&#39;alert(1)&#39; &amp; &lt;img src=x onerror=alert(2)&gt;',
      );
      // The image URL is stored parsed (its quotes and brackets percent-encoded), then escaped on the page.
      expect(metaOf(res.text, 'og:image')).toBe(
        'https://cdn.example.com/i.png?a=1&amp;b=%22%3E%3Cscript%3Ealert(3)%3C/script%3E',
      );
      expect(res.text).toContain('<title>&quot;&gt;&lt;script&gt;');
      expect(res.headers['content-security-policy']).toContain("default-src 'none'");
    });

    it('when a browser or another bot visits a link with a preview, then it is redirected as before', async () => {
      const link = await createLink(t, { original_url: 'https://example.com/people', preview: PREVIEW }, owner.token);
      for (const ua of [HUMAN_UA, BOT_UA, 'curl/8.5.0', 'Slackbot 1.0 (+https://api.slack.com/robots)']) {
        const res = await visit(t, link.short_code, { 'user-agent': ua });
        expect(res.status, ua).toBe(302);
        expect(res.headers.location).toBe('https://example.com/people');
      }
    });

    it('when an unfurler visits a link without a preview, then it is redirected as before', async () => {
      const link = await createLink(t, { original_url: 'https://example.com/no-card' }, owner.token);
      for (const [, ua] of UNFURLERS) {
        const res = await visit(t, link.short_code, { 'user-agent': ua });
        expect(res.status, ua).toBe(302);
        expect(res.headers.location).toBe('https://example.com/no-card');
      }
    });

    it("when an unfurler is shown the card, then its visit is a bot's click; a browser's is a person's", async () => {
      const link = await createLink(t, { preview: PREVIEW }, owner.token);
      await visit(t, link.short_code, { 'user-agent': SLACK });
      await visit(t, link.short_code, { 'user-agent': HUMAN_UA });
      const records = await clickRecords(t, link.id);
      expect(records.map((r) => [r.user_agent, Number(r.is_bot)])).toEqual([
        [SLACK, 1],
        [HUMAN_UA, 0],
      ]);
      const read = await t.request({ url: `${LINKS}/${link.short_code}`, token: owner.token });
      expect([read.body.bot_clicks, read.body.human_clicks]).toEqual([1, 1]);
    });

    it('when an unfurler sends HEAD, then it gets the page headers without a body and no click is recorded', async () => {
      const link = await createLink(t, { preview: PREVIEW }, owner.token);
      const res = await t.request({ method: 'HEAD', url: `/${link.short_code}`, headers: { 'user-agent': SLACK } });
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(res.headers['cache-control']).toBe('private, no-store');
      expect(res.text).toBe('');
      const browser = await t.request({
        method: 'HEAD',
        url: `/${link.short_code}`,
        headers: { 'user-agent': HUMAN_UA },
      });
      expect(browser.status).toBe(302);
      expect(await clickRecords(t, link.id)).toEqual([]);
    });

    it('when the link has a password, then an unfurler gets the refusal and nothing of the preview', async () => {
      const link = await createLink(t, { preview: PREVIEW, password: 'correct horse' }, owner.token);
      const res = await visit(t, link.short_code, { 'user-agent': SLACK, accept: 'text/html' });
      expect(res.status).toBe(401);
      expect(res.text).not.toContain(PREVIEW.title);
      expect(res.text).not.toContain('og:');
      const json = await visit(t, link.short_code, { 'user-agent': SLACK });
      expectEnvelope(json, 401, 'LINK_PASSWORD_REQUIRED');
    });

    it('when the link is disabled or expired, then an unfurler gets the 410 and nothing of the preview', async () => {
      const admin = await import('../../helpers/factories.js').then((f) => f.createUser(t, { role: 'admin' }));
      const disabled = await createLink(t, { preview: PREVIEW }, owner.token);
      expect((await patchLink(t, disabled.short_code, { disabled: true }, { token: admin.token })).status).toBe(200);
      const d = await visit(t, disabled.short_code, { 'user-agent': SLACK });
      expectEnvelope(d, 410, 'LINK_DISABLED');
      expect(d.text).not.toContain(PREVIEW.title);
      const expiring = await createLink(
        t,
        { preview: PREVIEW, expires_at: new Date(t.clock.now() + 60_000).toISOString() },
        owner.token,
      );
      t.clock.advance(120_000);
      const e = await visit(t, expiring.short_code, { 'user-agent': SLACK });
      expectEnvelope(e, 410, 'LINK_EXPIRED');
      expect(e.text).not.toContain(PREVIEW.title);
    });

    it('when a link with a visit limit is used up, then an unfurler gets 410, and its card visits never use one up', async () => {
      const link = await createLink(t, { preview: PREVIEW, max_visits: 1 }, owner.token);
      expect((await visit(t, link.short_code, { 'user-agent': SLACK })).status).toBe(200);
      expect((await visit(t, link.short_code, { 'user-agent': SLACK })).status).toBe(200);
      expect((await visit(t, link.short_code)).status).toBe(302);
      expectEnvelope(await visit(t, link.short_code, { 'user-agent': SLACK }), 410, 'LINK_EXHAUSTED');
    });

    it('when an unfurler comes through an alias, then og:url is the short URL of the code', async () => {
      const link = await createLink(t, { preview: PREVIEW, aliases: ['card-alias'] }, owner.token);
      const res = await visit(t, 'card-alias', { 'user-agent': SLACK });
      expect(res.status).toBe(200);
      expect(metaOf(res.text, 'og:url')).toBe(`https://fry.example/${link.short_code}`);
    });
  });
});

describe.each(engines)('link previews on the fast path on %s', (engine) => {
  const fixture = { t: null as Awaited<ReturnType<typeof appOnSocket>>['t'] | null, base: '' };
  it('when a cached link with a preview is visited on a socket, then browsers are redirected and unfurlers get the card', async () => {
    const { t, base } = await appOnSocket(engine);
    fixture.t = t;
    try {
      const plain = await createLink(t, { original_url: 'https://example.com/plain-fast' });
      const card = await createLink(t, { original_url: 'https://example.com/card-fast', preview: PREVIEW });
      for (let round = 0; round < 2; round += 1) {
        // The first round fills the cache; the second is what the fast path would answer.
        const get = (code: string, ua: string) =>
          fetch(`${base}/${code}`, { redirect: 'manual', headers: { 'user-agent': ua } });
        const browser = await get(card.short_code, HUMAN_UA);
        expect(browser.status).toBe(302);
        expect(browser.headers.get('location')).toBe('https://example.com/card-fast');
        const unfurler = await get(card.short_code, SLACK);
        expect(unfurler.status).toBe(200);
        expect(await unfurler.text()).toContain('<meta property="og:title" content="Spring sale">');
        const plainUnfurled = await get(plain.short_code, SLACK);
        expect(plainUnfurled.status).toBe(302);
      }
      const records = await clickRecords(t, card.id);
      expect(records.map((r) => Number(r.is_bot))).toEqual([0, 1, 0, 1]);
    } finally {
      await fixture.t?.close();
    }
  });
});
