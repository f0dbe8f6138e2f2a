import { useState } from 'preact/hooks';
import type { Link as ShortLink } from '../api/client';
import { useTitle } from '../ui/use-title';
import { CreatedLink } from './CreatedLink';
import { LinkForm } from './LinkForm';

/** Create a link (POST /links); once created, its short URL is shown as text, ready to copy. */
export function CreateLinkPage() {
  useTitle('New link');
  const [created, setCreated] = useState<ShortLink | null>(null);
  return (
    <>
      <h1>New link</h1>
      {created ? (
        <CreatedLink link={created} onAnother={() => setCreated(null)} />
      ) : (
        <LinkForm onCreated={setCreated} />
      )}
    </>
  );
}
