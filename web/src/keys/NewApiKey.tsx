import { useEffect, useRef } from 'preact/hooks';
import type { ApiKeyCreated } from '../api/client';
import { CopyButton } from '../ui/CopyButton';

/** The key itself, shown this once (only its hash is kept): copy it now. */
export function NewApiKey({ created, onDone }: { created: ApiKeyCreated; onDone: () => void }) {
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => heading.current?.focus(), [created.id]);
  return (
    <section class="new-key" aria-labelledby="new-key-shown">
      <h2 id="new-key-shown" tabIndex={-1} ref={heading}>
        Key “{created.name}” created
      </h2>
      <p>
        Copy it now: it is shown only this once. Send it as <code>Authorization: Bearer …</code>.
      </p>
      <p>
        <output aria-label="New API key">{created.key}</output>{' '}
        <CopyButton text={created.key} label="Copy the new API key" />
      </p>
      <button type="button" class="secondary" onClick={onDone}>
        I have copied it
      </button>
    </section>
  );
}
