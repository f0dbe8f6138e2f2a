import { Link } from '../router/Link';
import { appPath } from '../router/router';
import { useTitle } from '../ui/use-title';

export function NotFoundPage() {
  useTitle('Not found');
  return (
    <>
      <h1>Page not found</h1>
      <p>
        Nothing lives at this address. <Link href={appPath('/links')}>Go to your links</Link>
      </p>
    </>
  );
}
