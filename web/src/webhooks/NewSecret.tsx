import type { ComponentChildren } from 'preact';
import { useEffect, useRef } from 'preact/hooks';
import { CopyButton } from '../ui/CopyButton';

/**
 * A hook's signing secret, shown this once (SPEC §22: the API never shows it again): copy it now. Used after the
 * hook is created and after its secret is rotated.
 */
export function NewSecret(props: {
  heading: string;
  secret: string;
  children?: ComponentChildren;
  onDone: () => void;
}) {
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => heading.current?.focus(), [props.secret]);
  return (
    <section class="new-key" aria-labelledby="new-secret-shown">
      <h2 id="new-secret-shown" tabIndex={-1} ref={heading}>
        {props.heading}
      </h2>
      <p>
        Copy its signing secret now: it is shown only this once. Your receiver checks each request's{' '}
        <code>webhook-signature</code> with it (Standard Webhooks).
      </p>
      <p>
        <output aria-label="Signing secret">{props.secret}</output>{' '}
        <CopyButton text={props.secret} label="Copy the signing secret" />
      </p>
      {props.children}
      <button type="button" class="secondary" onClick={props.onDone}>
        I have copied it
      </button>
    </section>
  );
}
