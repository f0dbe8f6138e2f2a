import type { RefObject } from 'preact';
import { useEffect } from 'preact/hooks';

/**
 * After a refused submission, the first field the API named gets the focus, so keyboard and screen-reader
 * users land on what to correct (its message is read with it: Field's aria-describedby).
 */
export function useFocusFirstInvalid(form: RefObject<HTMLFormElement | null>, problem: unknown): void {
  useEffect(() => {
    if (problem) form.current?.querySelector<HTMLElement>('[aria-invalid="true"]')?.focus();
  }, [problem]);
}
