import type { Link as ShortLink } from '../api/client';

/** A link's title (when it has one) and its target, opened in a new tab: the Destination cell of both link tables. */
export function Destination({ link }: { link: Pick<ShortLink, 'title' | 'original_url'> }) {
  return (
    <>
      {link.title && <span class="link-title">{link.title}</span>}
      <a href={link.original_url} rel="noopener noreferrer" target="_blank" title={link.original_url}>
        {link.original_url}
      </a>
    </>
  );
}
