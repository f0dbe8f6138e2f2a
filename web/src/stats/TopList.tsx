import { useId } from 'preact/hooks';
import type { ComponentChildren } from 'preact';
import { formatCount } from '../ui/format';

export interface Ranked {
  value: string;
  clicks: number;
}

/**
 * One of Plausible's side panels: a short ranked list, each value with its clicks and a bar for its share
 * of the list's top value. `show` renders a value (a country's name, a link to a link's analytics).
 */
export function TopList({
  title,
  items,
  empty,
  show,
}: {
  title: string;
  items: Ranked[];
  empty: string;
  show?: (value: string) => ComponentChildren;
}) {
  const top = Math.max(1, ...items.map((i) => i.clicks));
  const id = useId();
  return (
    <section class="panel" aria-labelledby={id}>
      <h2 id={id}>{title}</h2>
      {items.length === 0 ? (
        <p class="muted">{empty}</p>
      ) : (
        <ol class="ranked">
          {items.map((item) => (
            <li key={item.value}>
              <span class="bar" style={{ width: `${(item.clicks / top) * 100}%` }} aria-hidden="true" />
              <span class="value" title={item.value}>
                {show ? show(item.value) : item.value}
              </span>
              <span class="clicks">{formatCount(item.clicks)}</span>
            </li>
          ))}
        </ol>
      )}
    </section>
  );
}
