import { useEffect, useState } from 'preact/hooks';

/** Copies a text (a short URL) to the clipboard and says so; names what it copies for screen readers. */
export function CopyButton({ text, label }: { text: string; label: string }) {
  const [state, setState] = useState<'idle' | 'copied' | 'failed'>('idle');
  useEffect(() => {
    if (state === 'idle') return;
    const timer = setTimeout(() => setState('idle'), 2000);
    return () => clearTimeout(timer);
  }, [state]);
  const copy = () => {
    // The clipboard API exists only in secure contexts (https, or loopback); elsewhere the text stays selectable.
    if (!window.isSecureContext || !('clipboard' in navigator)) return setState('failed');
    navigator.clipboard.writeText(text).then(
      () => setState('copied'),
      () => setState('failed'),
    );
  };
  return (
    <button type="button" class="copy" onClick={copy} aria-label={label}>
      {state === 'copied' ? 'Copied' : state === 'failed' ? 'Copy failed' : 'Copy'}
      <span class="visually-hidden" role="status">
        {state === 'copied'
          ? 'Copied to the clipboard'
          : state === 'failed'
            ? 'Could not copy; select the text instead'
            : ''}
      </span>
    </button>
  );
}
