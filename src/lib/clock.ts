/** Time as a dependency, so tests can move it (idempotency TTLs, token expiry, link expiry). */
export interface Clock {
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };
