/**
 * CSV (RFC 4180): CRLF line ends; a field with a comma, a quote, CR or LF is quoted and its quotes doubled.
 * A field that a spreadsheet would read as a formula — starting with = + - @, a tab or CR (OWASP "CSV
 * injection") — is prefixed with a single quote, so that a referrer or user agent a visitor chose cannot run
 * in the owner's spreadsheet.
 */
const FORMULA_START = /^[=+\-@\t\r]/;
const NEEDS_QUOTES = /[",\r\n]/;

export function csvField(value: string | number | boolean | null): string {
  if (value === null) return '';
  let text = String(value);
  if (typeof value === 'string' && FORMULA_START.test(text)) text = `'${text}`;
  return NEEDS_QUOTES.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

export const csvLine = (values: ReadonlyArray<string | number | boolean | null>): string => `${values.map(csvField).join(',')}\r\n`;
