import { useState } from 'preact/hooks';
import type { ApiKeyCreated } from '../api/client';
import { outcome } from '../api/outcome';
import { useApiData } from '../api/use-api-data';
import { useLocation, withQuery } from '../router/router';
import { useApi } from '../session/session';
import { PagedList } from '../ui/PagedList';
import { positiveInt } from '../ui/query-values';
import { useTitle } from '../ui/use-title';
import { ApiKeyForm } from './ApiKeyForm';
import { ApiKeyTable } from './ApiKeyTable';
import { NewApiKey } from './NewApiKey';

const PAGE_SIZE = 20;

/**
 * API keys (SPEC §14): the caller's keys (GET /users/me/api-keys), a form to create one with its scopes,
 * the new key shown once, and revoke. Keys act as their user, so they are made while signed in with a token.
 */
export function ApiKeysPage() {
  useTitle('API keys');
  const api = useApi();
  const location = useLocation();
  const page = positiveInt(location.query.get('page')) ?? 1;
  const [created, setCreated] = useState<ApiKeyCreated | null>(null);
  const [announcement, setAnnouncement] = useState('');
  const keys = useApiData(
    () =>
      outcome(
        api.GET('/api/v1/users/{id}/api-keys', {
          params: { path: { id: 'me' }, query: { page, limit: PAGE_SIZE, sort: 'created_at', order: 'desc' } },
        }),
      ),
    [page],
  );
  return (
    <>
      <h1>API keys</h1>
      <p class="muted">A key lets a program use the API as you, limited to the scopes you give it.</p>
      {created && <NewApiKey created={created} onDone={() => setCreated(null)} />}
      <ApiKeyForm
        onCreated={(key) => {
          setCreated(key);
          keys.reload();
        }}
      />
      <h2>Your keys</h2>
      <p class="visually-hidden" role="status" aria-live="polite">
        {announcement}
      </p>
      <PagedList
        list={keys}
        noun={['key', 'keys']}
        loadingWhat="your API keys"
        empty={<p>You have no API keys yet.</p>}
        pagerLabel="Pages of API keys"
        hrefForPage={(p) => withQuery(location, { page: p === 1 ? null : String(p) })}
      >
        {(items) => (
          <ApiKeyTable
            keys={items}
            onRevoked={() => {
              setAnnouncement('The key was revoked.');
              keys.reload();
            }}
          />
        )}
      </PagedList>
    </>
  );
}
