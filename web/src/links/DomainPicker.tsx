import { outcome } from '../api/outcome';
import { useApiData } from '../api/use-api-data';
import { useApi } from '../session/session';
import { Field } from '../ui/Field';

/** The link's domain (SPEC §19): the default one, or one of the caller's domains (a link on a pending one waits for its verification). */
export function DomainPicker({
  value,
  onChange,
  error,
}: {
  value: string;
  onChange: (domain: string) => void;
  error: string | undefined;
}) {
  const api = useApi();
  const domains = useApiData(() => outcome(api.GET('/api/v1/domains', { params: { query: { limit: 100 } } })), []);
  const mine = domains.state === 'ready' ? domains.data.data : [];
  if (mine.length === 0 && !value) return null;
  return (
    <Field label="Domain" hint="Where the short link lives; a domain serves visits once it is verified" error={error}>
      {(a) => (
        <select {...a} name="domain" value={value} onChange={(e) => onChange(e.currentTarget.value)}>
          <option value="">The default domain</option>
          {mine.map((d) => (
            <option key={d.id} value={d.hostname} disabled={!d.accepts_links}>
              {d.hostname}
              {d.verified_at ? '' : ' (not verified yet)'}
            </option>
          ))}
          {value && !mine.some((d) => d.hostname === value) && <option value={value}>{value}</option>}
        </select>
      )}
    </Field>
  );
}
