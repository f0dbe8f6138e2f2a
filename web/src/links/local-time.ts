/**
 * A `datetime-local` value ("2027-01-01T09:30") is a wall-clock time in the browser's zone; the API takes
 * an ISO 8601 instant in UTC. An unparseable value is sent as typed, so the API's message explains it.
 */
export function instantFromLocalInput(value: string): string {
  const ms = new Date(value).getTime();
  return Number.isNaN(ms) ? value : new Date(ms).toISOString();
}

const pad = (n: number): string => String(n).padStart(2, '0');

/** The other way, for a form that edits an instant: its wall-clock time here, to the minute. */
export function localInputFromInstant(iso: string): string {
  const d = new Date(iso);
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`;
}
