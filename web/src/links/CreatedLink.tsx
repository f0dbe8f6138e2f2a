import { useEffect, useRef } from 'preact/hooks';
import type { Link as ShortLink } from '../api/client';
import { Link } from '../router/Link';
import { appPath } from '../router/router';
import { CopyButton } from '../ui/CopyButton';

/** The new link's short URL as plain text (SPEC §16), to copy or open, and where to go next. */
export function CreatedLink({ link, onAnother }: { link: ShortLink; onAnother: () => void }) {
  // The form is gone: focus moves to the result, so it is what a screen reader reads next.
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => heading.current?.focus(), []);
  return (
    <section class="created" aria-labelledby="created-title">
      <h2 id="created-title" tabIndex={-1} ref={heading}>
        Link created
      </h2>
      <p class="created-url">
        <span class="label">Short URL</span>{' '}
        <output class="short-url" aria-label="Short URL">
          {link.short_url}
        </output>{' '}
        <CopyButton text={link.short_url} label={`Copy ${link.short_url}`} />
      </p>
      <p class="muted">
        Leads to <span class="destination">{link.original_url}</span>
      </p>
      <p class="row">
        <Link href={appPath(`/links/${encodeURIComponent(link.short_code)}/stats`)}>View analytics</Link>
        <button type="button" class="link-button" onClick={onAnother}>
          Create another link
        </button>
        <Link href={appPath('/links')}>Back to my links</Link>
      </p>
    </section>
  );
}
