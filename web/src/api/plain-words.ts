/**
 * The API's field messages in plain words. The server's own rules already read plainly ("is already taken",
 * "must be in the future"); what its schema validator says ("must NOT have fewer than 8 characters", "must
 * match pattern "^[A-Za-z0-9._-]{3,32}$"") is said again here as a person would say it. A message this does
 * not know is shown as the server wrote it.
 */

/** What a field's pattern allows, by the field's last name segment (`tags.2` → `tags`). */
const ALLOWED_CHARACTERS: Record<string, string> = {
  username: 'may contain only letters, digits, dots, underscores and hyphens',
  short_code: 'may contain only letters and digits',
  code: 'may contain only letters and digits',
  tags: 'may contain only letters, digits and hyphens',
  tag: 'may contain only letters, digits and hyphens',
  aliases: 'may contain only letters, digits, hyphens and underscores',
  hostname: 'must be a host name alone, without spaces, a scheme, a port or a path',
  domain: 'must be a host name alone, without spaces, a scheme, a port or a path',
};

const TYPES: Record<string, string> = {
  integer: 'must be a whole number',
  number: 'must be a number',
  string: 'must be text',
  boolean: 'must be yes or no',
};

type Rule = [RegExp, (m: RegExpExecArray, field: string) => string];

const RULES: Rule[] = [
  [/^must NOT have fewer than 1 characters$/, () => 'is required'],
  [/^must NOT have fewer than (\d+) characters$/, (m) => `must be at least ${m[1]} characters long`],
  [/^must NOT have more than (\d+) characters$/, (m) => `must be at most ${m[1]} characters long`],
  [/^must NOT have fewer than 1 items$/, () => 'choose at least one'],
  [/^must NOT have fewer than (\d+) items$/, (m) => `needs at least ${m[1]}`],
  [/^must NOT have more than (\d+) items$/, (m) => `can have at most ${m[1]}`],
  [/^must NOT have duplicate items\b.*$/, () => 'lists the same value twice'],
  [/^must be >= (-?[\d.]+)$/, (m) => `must be at least ${m[1]}`],
  [/^must be <= (-?[\d.]+)$/, (m) => `must be at most ${m[1]}`],
  [/^must be > (-?[\d.]+)$/, (m) => `must be more than ${m[1]}`],
  [/^must be < (-?[\d.]+)$/, (m) => `must be less than ${m[1]}`],
  [/^must be a valid (int32|int64)$/, () => 'must be a whole number'],
  [/^must be (integer|number|string|boolean)$/, (m) => TYPES[m[1]!]!],
  [/^must have required property '.*'$/, () => 'is required'],
  [
    /^must match pattern ".*"$/,
    (_m, field) => ALLOWED_CHARACTERS[baseName(field)] ?? 'contains characters that are not allowed here',
  ],
  [/^must match format "(.*)"$/, (m) => `must be a valid ${m[1]}`],
];

/** `tags.2` → `tags`; `links.0.original_url` → `original_url`. */
function baseName(field: string): string {
  const parts = field.split('.').filter((p) => !/^\d+$/.test(p));
  return parts[parts.length - 1] ?? field;
}

/** One message about `field`, in plain words. `, or null` (the field may be left out) reads "or left empty". */
export function plainMessage(field: string, message: string): string {
  const nullable = message.endsWith(', or null');
  const core = nullable ? message.slice(0, -', or null'.length) : message;
  for (const [pattern, say] of RULES) {
    const m = pattern.exec(core);
    if (m) return `${say(m, field)}${nullable ? ', or left empty' : ''}`;
  }
  return message;
}

/** A field's name as a person reads it: `original_url` → "original url", `tags.2` → "tags 3". */
export function fieldWords(field: string): string {
  return field
    .split('.')
    .map((p) => (/^\d+$/.test(p) ? String(Number(p) + 1) : p.replace(/_/g, ' ')))
    .join(' ');
}
