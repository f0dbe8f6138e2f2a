/** Query-string values read defensively: a hand-edited URL falls back to the default, never to an error. */
export function positiveInt(raw: string | null): number | null {
  if (raw === null || !/^\d{1,7}$/.test(raw)) return null;
  const n = Number(raw);
  return n >= 1 ? n : null;
}

export function oneOf<T extends string>(raw: string | null, allowed: readonly T[]): T | null {
  return allowed.find((a) => a === raw) ?? null;
}
