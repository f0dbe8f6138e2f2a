import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import type { Outcome } from './outcome';
import type { Problem } from './problem';

/** `updating`: the data shown is being replaced (new page, new filter, after a change). */
export type Loadable<T> =
  { state: 'loading' } | { state: 'error'; problem: Problem } | { state: 'ready'; data: T; updating: boolean };

/**
 * Data a screen shows, loaded again whenever `deps` change (the URL's query, a code) or on reload(). Only
 * the answer to the latest request is kept, so a slow earlier answer never overwrites a newer one; while a
 * new answer is awaited the old data stays on screen, marked as updating.
 */
export function useApiData<T>(
  load: () => Promise<Outcome<T>>,
  deps: readonly unknown[],
): Loadable<T> & { reload: () => void } {
  const [value, setValue] = useState<Loadable<T>>({ state: 'loading' });
  const [round, setRound] = useState(0);
  const latest = useRef(0);
  // `load` is a new closure on every render; `deps` say when it asks for something new.
  useEffect(() => {
    const ticket = ++latest.current;
    setValue((v) => (v.state === 'ready' ? { ...v, updating: true } : { state: 'loading' }));
    void load().then((o) => {
      if (ticket !== latest.current) return;
      setValue(o.ok ? { state: 'ready', data: o.data, updating: false } : { state: 'error', problem: o.problem });
    });
  }, [...deps, round]);
  const reload = useCallback(() => setRound((r) => r + 1), []);
  return { ...value, reload };
}
