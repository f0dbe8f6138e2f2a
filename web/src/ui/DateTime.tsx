import { formatDateTime } from './format';

/** An instant in the browser's time zone, with the API's exact UTC value as its machine-readable form. */
export function DateTime({ iso }: { iso: string }) {
  return (
    <time dateTime={iso} title={iso}>
      {formatDateTime(iso)}
    </time>
  );
}
