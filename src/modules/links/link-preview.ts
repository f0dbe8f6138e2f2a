/**
 * A link's preview for unfurlers (SPEC §21): the card Slack, Discord, X, Facebook, LinkedIn, WhatsApp, Telegram,
 * iMessage and Mastodon show for the short URL. Its schema (v1 names; v2 renames image_url to imageUrl), its
 * checks beyond the schema, and its stored form (JSON text in links.preview, migration 042).
 */
import Type from 'typebox';
import { NO_CONTROL_CHARACTERS } from '../../lib/common.schemas.js';
import type { ErrorDetail } from '../../lib/app-error.js';

export const MAX_PREVIEW_TITLE_LENGTH = 200;
export const MAX_PREVIEW_DESCRIPTION_LENGTH = 500;
export const MAX_PREVIEW_IMAGE_URL_LENGTH = 2048;

/** The preview as the API shows it: every field present, null where the link has none. */
export interface LinkPreview {
  title: string;
  description: string | null;
  image_url: string | null;
}

/** What a client sends: `description` and `image_url` may be omitted or null. */
export interface LinkPreviewInput {
  title: string;
  description?: string | null;
  image_url?: string | null;
}

const PREVIEW_RULE =
  `What link unfurlers (Slack, Discord, X, Facebook, LinkedIn, WhatsApp, Telegram, iMessage, Mastodon) show for the short URL: ` +
  `they get an HTML page with these as Open Graph and Twitter card tags instead of the redirect (counted as a bot visit); ` +
  `browsers are redirected as always. title: 1-${MAX_PREVIEW_TITLE_LENGTH} characters; description: at most ` +
  `${MAX_PREVIEW_DESCRIPTION_LENGTH}; image_url: an absolute https URL`;

const text = (max: number, description: string, minLength = 0) =>
  Type.String({ minLength, maxLength: max, pattern: NO_CONTROL_CHARACTERS, description });
const imageUrl = {
  minLength: 9,
  maxLength: MAX_PREVIEW_IMAGE_URL_LENGTH,
  // No white space or control characters; https, a host and no credentials are checked beside (previewText), so
  // that the message says what is wrong.
  pattern: '^[^\\s\\u0000-\\u001F\\u007F]+$',
  description: 'The card image: an absolute https URL (about 1200×630 suits every unfurler)',
};

/**
 * The request's preview: one schema of `type: [object, null]` rather than a union, so that a bad field is
 * reported once, as preview.title (not once per branch).
 */
export const PreviewInput = Type.Unsafe<LinkPreviewInput | null>({
  type: ['object', 'null'],
  properties: {
    title: text(MAX_PREVIEW_TITLE_LENGTH, 'The card title (surrounding white space trimmed; not empty)', 1),
    description: {
      ...text(MAX_PREVIEW_DESCRIPTION_LENGTH, 'The card text; null or omitted: none'),
      type: ['string', 'null'],
    },
    image_url: { type: ['string', 'null'], ...imageUrl, description: `${imageUrl.description}; null or omitted: none` },
  },
  required: ['title'],
  additionalProperties: false,
  description: `${PREVIEW_RULE}. null: no preview (unfurlers are redirected like everyone)`,
  examples: [
    { title: 'Spring sale', description: 'Everything 20% off until Sunday', image_url: 'https://example.com/card.png' },
  ],
});

/** The response's preview. */
export const PreviewOutput = Type.Union(
  [
    Type.Object(
      {
        title: Type.String({ minLength: 1, maxLength: MAX_PREVIEW_TITLE_LENGTH, pattern: NO_CONTROL_CHARACTERS }),
        description: Type.Union([
          Type.String({ maxLength: MAX_PREVIEW_DESCRIPTION_LENGTH, pattern: NO_CONTROL_CHARACTERS }),
          Type.Null(),
        ]),
        image_url: Type.Union([
          Type.String({ maxLength: MAX_PREVIEW_IMAGE_URL_LENGTH, pattern: '^https://', format: 'uri' }),
          Type.Null(),
        ]),
      },
      { additionalProperties: false },
    ),
    Type.Null(),
  ],
  { description: `${PREVIEW_RULE}. null: none` },
);

/** An https URL with a host and no credentials, in its parsed (normalised) form; null when it is not one. */
function httpsUrl(raw: string): string | null {
  if (!URL.canParse(raw)) return null;
  const url = new URL(raw);
  if (url.protocol !== 'https:' || url.hostname === '' || url.username !== '' || url.password !== '') return null;
  return url.href.length > MAX_PREVIEW_IMAGE_URL_LENGTH ? null : url.href;
}

/**
 * The preview's stored form (JSON text), or null for none; what the schema could not say goes into `details`
 * (a title of white space only, an image URL that is not https). undefined: not sent.
 */
export function previewText(
  input: LinkPreviewInput | null | undefined,
  details: ErrorDetail[],
): string | null | undefined {
  if (input === undefined || input === null) return input;
  const title = input.title.trim();
  const description = (input.description ?? '').trim();
  let image: string | null = null;
  if (title === '') details.push({ field: 'preview.title', message: 'must not be empty' });
  if (input.image_url != null) {
    image = httpsUrl(input.image_url.trim());
    if (image === null)
      details.push({
        field: 'preview.image_url',
        message: 'must be an absolute https URL with a host, without credentials',
      });
  }
  const preview: LinkPreview = { title, description: description === '' ? null : description, image_url: image };
  return JSON.stringify(preview);
}

/** The stored preview as the API shows it (a column written by previewText only). */
export function previewOf(stored: string | null): LinkPreview | null {
  if (stored === null) return null;
  const p = JSON.parse(stored) as Partial<LinkPreview>;
  return { title: p.title ?? '', description: p.description ?? null, image_url: p.image_url ?? null };
}
