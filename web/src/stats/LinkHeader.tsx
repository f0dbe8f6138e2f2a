import type { Link as ShortLink } from '../api/client';
import { Link } from '../router/Link';
import { appPath } from '../router/router';
import { CopyButton } from '../ui/CopyButton';
import { DateTime } from '../ui/DateTime';

/** Which link these figures are about: its short URL (to copy), where it leads, when it expires. */
export function LinkHeader({ link }: { link: ShortLink }) {
  return (
    <div class="link-header">
      <p>
        <span class="short-url">{link.short_url}</span> <CopyButton text={link.short_url} label={`Copy ${link.short_url}`} />
      </p>
      <p class="muted">
        Leads to{' '}
        <a href={link.original_url} rel="noopener noreferrer" target="_blank" class="destination">
          {link.original_url}
        </a>
        {link.expires_at && (
          <>
            {' '}
            · expires <DateTime iso={link.expires_at} />
          </>
        )}{' '}
        · <Link href={appPath(`/links/${encodeURIComponent(link.short_code)}/edit`)} aria-label={`Edit ${link.short_code}`}>Edit</Link>
      </p>
    </div>
  );
}
