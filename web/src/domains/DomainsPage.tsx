import { outcome } from '../api/outcome';
import { useApiData } from '../api/use-api-data';
import { useApi } from '../session/session';
import { ErrorState, Loading } from '../ui/States';
import { useTitle } from '../ui/use-title';
import { AddDomainForm } from './AddDomainForm';
import { DomainCard } from './DomainCard';

/**
 * Domains (SPEC §19): add a host name, see the record that proves it is yours, verify it, and set where its
 * visitors go when a code is unknown or expired.
 */
export function DomainsPage() {
  useTitle('Domains');
  const api = useApi();
  const domains = useApiData(() => outcome(api.GET('/api/v1/domains', { params: { query: { limit: 100 } } })), []);
  return (
    <>
      <h1>Domains</h1>
      <p class="muted">
        Short links on a host name of your own: add it, publish the record below, verify, then pick it when you make a
        link.
      </p>
      <AddDomainForm onAdded={domains.reload} />
      <h2>Your domains</h2>
      {domains.state === 'loading' && <Loading what="your domains" />}
      {domains.state === 'error' && <ErrorState problem={domains.problem} onRetry={domains.reload} />}
      {domains.state === 'ready' &&
        (domains.data.data.length === 0 ? (
          <p>You have no domains yet.</p>
        ) : (
          domains.data.data.map((d) => <DomainCard key={d.id} domain={d} onChanged={domains.reload} />)
        ))}
    </>
  );
}
