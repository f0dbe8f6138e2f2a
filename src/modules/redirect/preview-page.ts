import type { LinkPreview } from '../links/index.js';

/**
 * Previews for unfurlers (SPEC §21): the link unfurlers of chat apps and social networks, known by their user
 * agents, get a page of Open Graph and Twitter card tags for a link that has a preview, instead of the redirect.
 *
 * The user agents, as each service documents or sends them:
 * - Slack: `Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)` (its other crawler, `Slackbot 1.0`, does
 *   not unfurl)
 * - Discord: `Mozilla/5.0 (compatible; Discordbot/2.0; +https://discordapp.com)`
 * - X/Twitter: `Twitterbot/1.0`
 * - Facebook (and Messenger, Instagram): `facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)`,
 *   or `Facebot`
 * - LinkedIn: `LinkedInBot/1.0 (compatible; Mozilla/5.0; Apache-HttpClient +http://www.linkedin.com)`
 * - WhatsApp: `WhatsApp/2.23.20.0 A` (the app's version, then A for Android, i for iOS)
 * - Telegram: `TelegramBot (like TwitterBot)`
 * - iMessage: a Safari user agent followed by `facebookexternalhit/1.1 Facebot Twitterbot/1.0`
 * - Mastodon: `http.rb/5.1.0 (Mastodon/4.0.2; +https://example.social/) Bot`, from 4.1 on
 *   `Mastodon/4.2.1 (http.rb/5.1.1; +https://example.social/) Bot`
 * Each of these is a bot to isbot as well (clicks/event/bot.ts), so the visit counts as one.
 */
const UNFURLER =
  /Slackbot-LinkExpanding|Discordbot|Twitterbot|facebookexternalhit|Facebot|LinkedInBot|^WhatsApp\/|TelegramBot|Mastodon\//i;

export const isUnfurler = (userAgent: string | undefined): boolean =>
  userAgent !== undefined && UNFURLER.test(userAgent);

const ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
/** Text for an element or a quoted attribute value: nothing in it can end the value or open markup. */
export const escapeHtml = (text: string): string => text.replace(/[&<>"']/g, (c) => ENTITIES[c]!);

/**
 * The page an unfurler reads: the card's title, text and image as Open Graph and Twitter card tags, og:url the
 * short URL. Every value is escaped; nothing on it loads or runs anything (the error pages' CSP applies).
 */
export function previewPage(preview: LinkPreview, shortUrl: string): string {
  const title = escapeHtml(preview.title);
  const url = escapeHtml(shortUrl);
  const description = preview.description === null ? null : escapeHtml(preview.description);
  const image = preview.image_url === null ? null : escapeHtml(preview.image_url);
  const meta = (attr: 'property' | 'name', key: string, value: string) => `<meta ${attr}="${key}" content="${value}">`;
  const tags = [
    meta('property', 'og:type', 'website'),
    meta('property', 'og:url', url),
    meta('property', 'og:title', title),
    ...(description === null
      ? []
      : [meta('name', 'description', description), meta('property', 'og:description', description)]),
    ...(image === null ? [] : [meta('property', 'og:image', image)]),
    meta('name', 'twitter:card', image === null ? 'summary' : 'summary_large_image'),
    meta('name', 'twitter:title', title),
    ...(description === null ? [] : [meta('name', 'twitter:description', description)]),
    ...(image === null ? [] : [meta('name', 'twitter:image', image)]),
  ];
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="robots" content="noindex">
<title>${title}</title>
${tags.join('\n')}
</head><body><h1>${title}</h1>${description === null ? '' : `<p>${description}</p>`}<p><a href="${url}">${url}</a></p></body></html>
`;
}
