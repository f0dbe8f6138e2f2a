import type { Link as ShortLink } from '../api/client';
import { Link } from '../router/Link';
import { appPath } from '../router/router';
import { CopyButton } from '../ui/CopyButton';
import { ShortUrl } from '../ui/ShortUrl';
import { ClickCounts } from './ClickCounts';
import { Destination } from './Destination';
import { LinkAliases } from './LinkAliases';
import { DateTime } from '../ui/DateTime';
import { TableHead } from '../ui/TableHead';
import { DeleteLinkButton } from './DeleteLinkButton';
import { QrCode } from './QrCode';

/** What sets a link apart beyond its target: disabled by an admin (and why), tags (each a filter of the list), password, limit, query forwarding. */
function LinkTraits({ link, tagHref }: { link: ShortLink; tagHref: (tag: string) => string }) {
  const broken = link.health.status === 'broken';
  if (!link.tags.length && !link.has_password && link.max_visits === null && !link.forward_query && !link.disabled)
    if (!broken) return null;
  return (
    <span class="traits">
      {link.disabled && (
        <span class="badge badge-suspended" title={link.disabled_reason ?? undefined}>
          disabled by an admin{link.disabled_reason ? `: ${link.disabled_reason}` : ''}
        </span>
      )}
      {broken && (
        <span class="badge badge-suspended" title={link.health.error ?? undefined}>
          broken{link.health.error ? `: ${link.health.error}` : ''}
        </span>
      )}
      {link.tags.map((tag) => (
        <Link key={tag} href={tagHref(tag)} class="tag" aria-label={`Links tagged ${tag}`}>
          {tag}
        </Link>
      ))}
      {link.has_password && <span class="badge">password</span>}
      {link.max_visits !== null && <span class="badge">max {link.max_visits} visits</span>}
      {link.forward_query && <span class="badge">forwards query</span>}
    </span>
  );
}

/** The row's actions: analytics, edit, QR code, delete. */
function LinkActions({ link, onDeleted }: { link: ShortLink; onDeleted: () => void }) {
  return (
    <td class="actions">
      <Link
        href={appPath(`/links/${encodeURIComponent(link.short_code)}/stats`)}
        aria-label={`Analytics of ${link.short_code}`}
      >
        Analytics
      </Link>
      <Link href={appPath(`/links/${encodeURIComponent(link.short_code)}/edit`)} aria-label={`Edit ${link.short_code}`}>
        Edit
      </Link>
      <QrCode code={link.short_code} shortUrl={link.short_url} />
      <DeleteLinkButton code={link.short_code} onDeleted={onDeleted} />
    </td>
  );
}

/**
 * The links, one row each: short URL (with copy) and aliases, destination, clicks by people and by bots, dates,
 * and what can be done with it.
 * At phone width the rows become cards (styles.css), each cell labelled by its column.
 */
export function LinkTable({
  links,
  onDeleted,
  tagHref,
}: {
  links: ShortLink[];
  onDeleted: () => void;
  tagHref: (tag: string) => string;
}) {
  return (
    <table class="table links-table">
      <caption class="visually-hidden">Your short links</caption>
      <TableHead
        columns={[
          'Short URL',
          'Destination',
          { label: 'People', numeric: true },
          { label: 'Bots', numeric: true },
          'Created',
          'Expires',
          { label: 'Actions', hidden: true },
        ]}
      />
      <tbody>
        {links.map((link) => (
          <tr key={link.id}>
            <td data-label="Short URL">
              <ShortUrl url={link.short_url} /> <CopyButton text={link.short_url} label={`Copy ${link.short_url}`} />
              <LinkAliases link={link} />
            </td>
            <td data-label="Destination" class="destination">
              <Destination link={link} />
              <LinkTraits link={link} tagHref={tagHref} />
            </td>
            <ClickCounts link={link} />
            <td data-label="Created">
              <DateTime iso={link.created_at} />
            </td>
            <td data-label="Expires">{link.expires_at ? <DateTime iso={link.expires_at} /> : 'Never'}</td>
            <LinkActions link={link} onDeleted={onDeleted} />
          </tr>
        ))}
      </tbody>
    </table>
  );
}
