/** Instants are shown in the browser's time zone, to the minute (DateTime.tsx keeps the exact UTC value). */
const dateTime = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });

export const formatDateTime = (iso: string): string => dateTime.format(new Date(iso));

const number = new Intl.NumberFormat();
export const formatCount = (n: number): string => number.format(n);
