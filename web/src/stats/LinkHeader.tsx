import type { Link as ShortLink } from '../api/client';
import { Link } from '../router/Link';
import { appPath } from '../router/router';
import { aliasUrl } from '../links/link-names';
import { CopyButton } from '../ui/CopyButton';
import { DateTime } from '../ui/DateTime';
import { ShortUrl } from '../ui/ShortUrl';

/** Which link these figures are about: its short URL (to copy), its aliases' URLs, where it leads, when it expires. */
export function LinkHeader({ link }: { link: ShortLink }) {
  return (
    <div class="link-header">
      <p>
        <ShortUrl url={link.short_url} /> <CopyButton text={link.short_url} label={`Copy ${link.short_url}`} />
      </p>
      {link.aliases.length > 0 && (
        <ul class="link-aliases" aria-label="Aliases">
          {link.aliases.map((alias) => (
            <li key={alias}>
              <ShortUrl url={aliasUrl(link, alias)} />{' '}
              <CopyButton text={aliasUrl(link, alias)} label={`Copy ${aliasUrl(link, alias)}`} />
            </li>
          ))}
        </ul>
      )}
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
        ·{' '}
        <Link
          href={appPath(`/links/${encodeURIComponent(link.short_code)}/edit`)}
          aria-label={`Edit ${link.short_code}`}
        >
          Edit
        </Link>
      </p>
    </div>
  );
}
