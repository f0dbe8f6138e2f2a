import type { ComponentType, FunctionComponent } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { ErrorState, Loading } from '../ui/States';

/**
 * A screen whose code is loaded on first use (a separate chunk: the analytics screen and its chart
 * library stay out of the first load). A chunk that cannot be fetched (offline; a new build replaced it)
 * says so instead of leaving a blank page.
 */
export function lazyScreen<P extends object>(
  load: () => Promise<{ default: ComponentType<P> }>,
  what: string,
): FunctionComponent<P> {
  let loaded: ComponentType<P> | null = null;
  return function LazyScreen(props: P) {
    const [Screen, setScreen] = useState<ComponentType<P> | null>(() => loaded);
    const [failed, setFailed] = useState(false);
    useEffect(() => {
      if (Screen) return;
      load().then(
        (m) => {
          loaded = m.default;
          setScreen(() => m.default);
        },
        () => setFailed(true),
      );
    }, []);
    if (failed) {
      const problem = {
        status: 0,
        code: 'CHUNK',
        message: `The ${what} screen could not be loaded; reload the page.`,
        fields: {},
        retryAfter: null,
      };
      return <ErrorState problem={problem} onRetry={() => window.location.reload()} />;
    }
    return Screen ? <Screen {...props} /> : <Loading what={what} />;
  };
}
