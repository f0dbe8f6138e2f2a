import type { Link as ShortLink } from '../api/client';
import { Link } from '../router/Link';
import { appPath } from '../router/router';
import { CopyButton } from '../ui/CopyButton';
import { DateTime } from '../ui/DateTime';
import { TableHead } from '../ui/TableHead';
import { DeleteLinkButton } from './DeleteLinkButton';

/**
 * The links, one row each: short URL (with copy), destination, clicks, dates, and what can be done with it.
 * At phone width the rows become cards (styles.css), each cell labelled by its column.
 */
export function LinkTable({ links, onDeleted }: { links: ShortLink[]; onDeleted: () => void }) {
  return (
    <table class="table links-table">
      <caption class="visually-hidden">Your short links, newest first</caption>
      <TableHead columns={['Short URL', 'Destination', { label: 'Clicks', numeric: true }, 'Created', 'Expires', { label: 'Actions', hidden: true }]} />
      <tbody>
        {links.map((link) => (
          <tr key={link.id}>
            <td data-label="Short URL">
              <span class="short-url">{link.short_url}</span> <CopyButton text={link.short_url} label={`Copy ${link.short_url}`} />
            </td>
            <td data-label="Destination" class="destination">
              <a href={link.original_url} rel="noopener noreferrer" target="_blank" title={link.original_url}>
                {link.original_url}
              </a>
            </td>
            <td data-label="Clicks" class="num">
              {link.click_count}
            </td>
            <td data-label="Created">
              <DateTime iso={link.created_at} />
            </td>
            <td data-label="Expires">{link.expires_at ? <DateTime iso={link.expires_at} /> : 'Never'}</td>
            <td class="actions">
              <Link href={appPath(`/links/${encodeURIComponent(link.short_code)}/stats`)} aria-label={`Analytics of ${link.short_code}`}>
                Analytics
              </Link>
              <DeleteLinkButton code={link.short_code} onDeleted={onDeleted} />
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
