import { useEffect } from 'preact/hooks';

/** The tab's title names the screen (and is what a screen reader announces after a navigation). */
export function useTitle(title: string): void {
  useEffect(() => {
    document.title = `${title} · Ferry`;
  }, [title]);
}
