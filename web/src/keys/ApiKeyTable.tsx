import type { ApiKey } from '../api/client';
import { DateTime } from '../ui/DateTime';
import { TableHead } from '../ui/TableHead';
import { RevokeKeyButton } from './RevokeKeyButton';

/** The keys, one row each (never the key itself: only its prefix); at phone width, labelled cards. */
export function ApiKeyTable({ keys, onRevoked }: { keys: ApiKey[]; onRevoked: () => void }) {
  return (
    <table class="table keys-table">
      <caption class="visually-hidden">Your API keys</caption>
      <TableHead
        columns={['Name', 'Prefix', 'Scopes', 'Created', 'Expires', 'Last used', { label: 'Actions', hidden: true }]}
      />
      <tbody>
        {keys.map((k) => (
          <tr key={k.id}>
            <td data-label="Name">{k.name}</td>
            <td data-label="Prefix">
              <code>fry_{k.prefix}…</code>
            </td>
            <td data-label="Scopes">{k.scopes.join(', ')}</td>
            <td data-label="Created">
              <DateTime iso={k.created_at} />
            </td>
            <td data-label="Expires">{k.expires_at ? <DateTime iso={k.expires_at} /> : 'Never'}</td>
            <td data-label="Last used">{k.last_used_at ? <DateTime iso={k.last_used_at} /> : 'Not yet'}</td>
            <td class="actions">
              <RevokeKeyButton apiKey={k} onRevoked={onRevoked} />
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
