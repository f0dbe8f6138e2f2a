import type { Link as ShortLink, User } from '../api/client';
import { ClickCounts } from '../links/ClickCounts';
import { Destination } from '../links/Destination';
import { LinkAliases } from '../links/LinkAliases';
import { Link } from '../router/Link';
import { appPath } from '../router/router';
import { DateTime } from '../ui/DateTime';
import { ShortUrl } from '../ui/ShortUrl';
import { TableHead } from '../ui/TableHead';
import { ModerationAction } from './ModerationAction';

interface AllLinksTableProps {
  links: ShortLink[];
  owners: Map<number, User>;
  /** the list filtered by that owner */
  ownerHref: (userId: number) => string;
  /** a link was disabled or enabled: what to announce */
  onChanged: (message: string) => void;
}

/** A link's state as the admin list's status filter names it, with the reason when an admin gave one. */
function LinkState({ link }: { link: ShortLink }) {
  if (link.disabled) {
    return (
      <>
        <span class="badge badge-suspended">disabled</span>
        {link.disabled_reason && <span class="reason"> {link.disabled_reason}</span>}
      </>
    );
  }
  if (link.expires_at !== null && Date.parse(link.expires_at) <= Date.now()) return <span class="badge">expired</span>;
  return <span class="badge badge-active">active</span>;
}

function Owner({ link, owners, ownerHref }: Pick<AllLinksTableProps, 'owners' | 'ownerHref'> & { link: ShortLink }) {
  if (link.user_id === null) return <span class="muted">anonymous</span>;
  const name = owners.get(link.user_id)?.username ?? `user #${link.user_id}`;
  return (
    <Link href={ownerHref(link.user_id)} aria-label={`Links of ${name}`}>
      {name}
    </Link>
  );
}

/** Every link, one row each: short URL and aliases, destination, owner (a filter of the list), clicks, state, and the admin's action. */
export function AllLinksTable({ links, owners, ownerHref, onChanged }: AllLinksTableProps) {
  return (
    <table class="table links-table all-links-table">
      <caption class="visually-hidden">All short links</caption>
      <TableHead
        columns={[
          'Short URL',
          'Destination',
          'Owner',
          { label: 'People', numeric: true },
          { label: 'Bots', numeric: true },
          'Status',
          'Created',
          { label: 'Actions', hidden: true },
        ]}
      />
      <tbody>
        {links.map((link) => (
          <tr key={link.id} data-code={link.short_code}>
            <td data-label="Short URL">
              <ShortUrl url={link.short_url} />
              <LinkAliases link={link} />
            </td>
            <td data-label="Destination" class="destination">
              <Destination link={link} />
            </td>
            <td data-label="Owner">
              <Owner link={link} owners={owners} ownerHref={ownerHref} />
            </td>
            <ClickCounts link={link} />
            <td data-label="Status" class="link-state">
              <LinkState link={link} />
            </td>
            <td data-label="Created">
              <DateTime iso={link.created_at} />
            </td>
            <td class="actions">
              <Link
                href={appPath(`/links/${encodeURIComponent(link.short_code)}/stats`)}
                aria-label={`Analytics of ${link.short_code}`}
              >
                Analytics
              </Link>
              <ModerationAction link={link} onChanged={onChanged} />
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
