import type { Link as ShortLink } from '../api/client';

/** An alias's short URL: the link's, with the alias in place of the code (SPEC §20). */
export const aliasUrl = (link: Pick<ShortLink, 'short_url' | 'short_code'>, alias: string): string =>
  `${link.short_url.slice(0, -link.short_code.length)}${alias}`;

/**
 * The name people know a link by: its title, else its first alias (an imported or hand-picked slug), else its
 * code (often generated, such as `I8IGeLlV`).
 */
export function linkName(link: Pick<ShortLink, 'title' | 'aliases' | 'short_code'>): { text: string; isCode: boolean } {
  if (link.title) return { text: link.title, isCode: false };
  return { text: link.aliases[0] ?? link.short_code, isCode: true };
}
