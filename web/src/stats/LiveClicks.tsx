import { useEffect, useState } from 'preact/hooks';
import { followEvents } from '../api/event-stream';
import { useToken } from '../session/session';

interface Clicked {
  click: {
    id: number;
    clicked_at: string;
    country: string | null;
    device: string;
    referrer_host: string | null;
    bot: boolean;
  };
  link: { id: number };
}

/**
 * Clicks on this link as they are stored (SPEC §22's `link.clicked` from the live stream): a counter since the
 * screen opened and the latest few. The statistics below are as of their last load.
 */
export function LiveClicks({ linkId }: { linkId: number }) {
  const token = useToken();
  const [count, setCount] = useState(0);
  const [latest, setLatest] = useState<Clicked['click'][]>([]);
  useEffect(() => {
    const stop = new AbortController();
    void followEvents({
      token,
      types: ['link.clicked'],
      signal: stop.signal,
      onEvent: (e) => {
        const data = e.data as Clicked;
        if (data.link.id !== linkId) return;
        setCount((n) => n + 1);
        setLatest((list) => [data.click, ...list].slice(0, 5));
      },
    });
    return () => stop.abort();
  }, [linkId, token]);
  return (
    <section class="live-clicks" aria-live="polite">
      <h2>
        Live: <span data-testid="live-count">{count}</span> {count === 1 ? 'click' : 'clicks'} since you opened this
        page
      </h2>
      {latest.length > 0 && (
        <ul>
          {latest.map((c) => (
            <li key={c.id}>
              {new Date(c.clicked_at).toLocaleTimeString()} · {c.device}
              {c.country ? ` · ${c.country}` : ''}
              {c.referrer_host ? ` · from ${c.referrer_host}` : ''}
              {c.bot ? ' · bot' : ''}
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
