import type { Link as ShortLink } from '../api/client';
import { aliasUrl } from './link-names';

/** A row's aliases (SPEC §20), the slugs people know the link by, each as the path it answers on. */
export function LinkAliases({ link }: { link: Pick<ShortLink, 'short_url' | 'short_code' | 'aliases'> }) {
  if (link.aliases.length === 0) return null;
  return (
    <span class="row-aliases">
      also {/* Shown inline, which drops a list's role in Chromium's accessibility tree: named explicitly. */}
      <ul role="list" aria-label={`Aliases of ${link.short_code}`}>
        {link.aliases.map((alias) => (
          <li key={alias} role="listitem" class="code" title={aliasUrl(link, alias)}>
            /{alias}
          </li>
        ))}
      </ul>
    </span>
  );
}
