import type { Link as ShortLink } from '../api/client';
import { formatCount } from '../ui/format';

/**
 * A link's clicks as its analytics count them: people and bots apart (human_clicks, bot_clicks), two cells
 * of a links table under the columns "People" and "Bots".
 */
export function ClickCounts({ link }: { link: Pick<ShortLink, 'human_clicks' | 'bot_clicks'> }) {
  return (
    <>
      <td data-label="People" class="num" data-testid="human-clicks">
        {formatCount(link.human_clicks)}
      </td>
      <td data-label="Bots" class="num muted" data-testid="bot-clicks">
        {formatCount(link.bot_clicks)}
      </td>
    </>
  );
}
