import { useState } from 'preact/hooks';
import type { WebhookCreated } from '../api/client';
import { outcome } from '../api/outcome';
import { useApiData } from '../api/use-api-data';
import { Link } from '../router/Link';
import { appPath, useLocation, withQuery } from '../router/router';
import { useApi, useUser } from '../session/session';
import { PagedList } from '../ui/PagedList';
import { positiveInt } from '../ui/query-values';
import { useTitle } from '../ui/use-title';
import { NewSecret } from './NewSecret';
import { WebhookForm } from './WebhookForm';
import { WebhookTable } from './WebhookTable';

const PAGE_SIZE = 20;

/**
 * Webhooks (SPEC §22): the caller's hooks (an admin's: everyone's), a form to create one, and its signing secret
 * shown once. Each hook's screen (WebhookPage) has its actions and its delivery log.
 */
export default function WebhooksPage() {
  useTitle('Webhooks');
  const api = useApi();
  const admin = useUser().role === 'admin';
  const location = useLocation();
  const page = positiveInt(location.query.get('page')) ?? 1;
  const [created, setCreated] = useState<WebhookCreated | null>(null);
  const hooks = useApiData(
    () =>
      outcome(
        api.GET('/api/v1/webhooks', {
          params: { query: { page, limit: PAGE_SIZE, sort: 'created_at', order: 'desc' } },
        }),
      ),
    [page],
  );
  return (
    <>
      <h1>Webhooks</h1>
      <p class="muted">
        A webhook sends each event of your links and domains to a URL of yours as it happens, signed, retried for three
        days until your receiver answers 2xx.
      </p>
      {created && (
        <NewSecret heading="Webhook created" secret={created.secret} onDone={() => setCreated(null)}>
          <p>
            <Link href={appPath(`/webhooks/${created.id}`)}>Send it a test event and see its deliveries</Link>
          </p>
        </NewSecret>
      )}
      <WebhookForm
        onCreated={(hook) => {
          setCreated(hook);
          hooks.reload();
        }}
      />
      <h2>{admin ? 'Every webhook' : 'Your webhooks'}</h2>
      <PagedList
        list={hooks}
        noun={['webhook', 'webhooks']}
        loadingWhat="your webhooks"
        empty={<p>You have no webhooks yet.</p>}
        pagerLabel="Pages of webhooks"
        hrefForPage={(p) => withQuery(location, { page: p === 1 ? null : String(p) })}
      >
        {(items) => <WebhookTable hooks={items} />}
      </PagedList>
    </>
  );
}
