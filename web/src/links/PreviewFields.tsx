import type { Link as ShortLink } from '../api/client';
import { fieldMessage, type Problem } from '../api/problem';
import { Field } from '../ui/Field';

/** The preview's inputs (SPEC §21), as text. */
export interface PreviewValues {
  title: string;
  description: string;
  image_url: string;
}

/** The fields the API's messages can name for the preview (details[].field). */
export const PREVIEW_FIELDS = ['preview', 'preview.title', 'preview.description', 'preview.image_url'] as const;

export function previewValuesFromLink(link: ShortLink): PreviewValues {
  return {
    title: link.preview?.title ?? '',
    description: link.preview?.description ?? '',
    image_url: link.preview?.image_url ?? '',
  };
}

type PreviewBody = { title: string; description?: string; image_url?: string };

/**
 * The PATCH's `preview`, when the inputs differ from the link as it was read: the whole preview (it is replaced
 * as one), or null once every input is emptied; undefined when nothing changed. An emptied title with a
 * description or image left goes as an empty title, so that the API's message stands beside the field.
 */
export function previewPatch(link: ShortLink, v: PreviewValues): PreviewBody | null | undefined {
  const was = previewValuesFromLink(link);
  const now = { title: v.title.trim(), description: v.description.trim(), image_url: v.image_url.trim() };
  if (now.title === was.title && now.description === was.description && now.image_url === was.image_url)
    return undefined;
  return previewBody(now) ?? null;
}

/** The creation's `preview`: the whole preview once any input is filled (an empty title goes, for its message). */
export function previewBody(v: PreviewValues): PreviewBody | undefined {
  const now = { title: v.title.trim(), description: v.description.trim(), image_url: v.image_url.trim() };
  if (!now.title && !now.description && !now.image_url) return undefined;
  return {
    title: now.title,
    ...(now.description ? { description: now.description } : {}),
    ...(now.image_url ? { image_url: now.image_url } : {}),
  };
}

export const EMPTY_PREVIEW: PreviewValues = { title: '', description: '', image_url: '' };

/** The image's host, for the card (its picture is not loaded: the dashboard loads nothing from elsewhere). */
function imageHost(url: string): string | null {
  try {
    return new URL(url).host || null;
  } catch {
    return null;
  }
}

/**
 * The preview's fields and the card chat apps will show, drawn from them as they are typed: what Slack, Discord
 * and the others render from the Open Graph tags Ferry gives them.
 */
export function PreviewFields({
  values,
  onChange,
  problem,
  shortUrl,
}: {
  values: PreviewValues;
  onChange: (values: PreviewValues) => void;
  problem: Problem | null;
  shortUrl: string;
}) {
  const err = (field: string) =>
    fieldMessage(problem, `preview.${field}`) ?? (field === 'title' ? fieldMessage(problem, 'preview') : undefined);
  const set = (field: keyof PreviewValues) => (e: { currentTarget: HTMLInputElement | HTMLTextAreaElement }) =>
    onChange({ ...values, [field]: e.currentTarget.value });
  return (
    <fieldset class="preview-fields">
      <legend>Preview in chat apps</legend>
      <p class="field-hint">
        Slack, Discord, X, Facebook, LinkedIn, WhatsApp, Telegram, iMessage and Mastodon show this card for the short
        link; people are still sent to the destination. Leave every field empty for no card.
      </p>
      <Field label="Preview title" hint="Up to 200 characters" error={err('title')}>
        {(a) => <input {...a} name="preview_title" maxLength={200} value={values.title} onInput={set('title')} />}
      </Field>
      <Field label="Preview description" hint="Optional, up to 500 characters" error={err('description')}>
        {(a) => (
          <textarea
            {...a}
            name="preview_description"
            rows={3}
            maxLength={500}
            value={values.description}
            onInput={set('description')}
          />
        )}
      </Field>
      <Field label="Preview image URL" hint="Optional: an https address, about 1200×630" error={err('image_url')}>
        {(a) => (
          <input
            {...a}
            name="preview_image_url"
            type="url"
            inputMode="url"
            placeholder="https://example.com/card.png"
            value={values.image_url}
            onInput={set('image_url')}
          />
        )}
      </Field>
      <PreviewCard values={values} shortUrl={shortUrl} />
    </fieldset>
  );
}

/** The card as chat apps draw it from the Open Graph tags, from the inputs as they are typed. */
function PreviewCard({ values, shortUrl }: { values: PreviewValues; shortUrl: string }) {
  const host = imageHost(shortUrl) ?? shortUrl;
  const image = values.image_url.trim() ? imageHost(values.image_url.trim()) : null;
  return (
    <>
      {values.title.trim() && (
        <figure class="preview-card" aria-label="Card preview">
          {image && (
            <div class="preview-card-image" role="img" aria-label={`Image from ${image}`}>
              {image}
            </div>
          )}
          <figcaption>
            <span class="preview-card-host">{host}</span>
            <strong class="preview-card-title">{values.title.trim()}</strong>
            {values.description.trim() && <span class="preview-card-text">{values.description.trim()}</span>}
          </figcaption>
        </figure>
      )}
    </>
  );
}
