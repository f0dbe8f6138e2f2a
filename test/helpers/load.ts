/** One kind of request the load sends, made fresh for each send (`n` counts sends). */
export type LoadRequest = (n: number) => {
  method?: string;
  path: string;
  token?: string;
  body?: unknown;
  headers?: Record<string, string>;
};

export interface LoadTally {
  total: number;
  /** answers by status */
  statuses: Record<number, number>;
  /** 5xx answers other than 503, and 503s without Retry-After: what a dependency fault must never produce */
  bad: string[];
  /** requests that got no answer at all (the process went away, a connection was reset) */
  unanswered: string[];
  /** error codes of the 503s */
  codes: Record<string, number>;
}

export interface Load {
  tally: LoadTally;
  /** answers of `status` so far */
  count(status: number): number;
  stop(): Promise<LoadTally>;
}

/**
 * `concurrency` loops sending the given requests round-robin to a real server until stop(): a tally of what
 * came back, for tests that take a dependency away under load (test/server/dependency-outages.test.ts).
 */
export function startLoad(baseUrl: string, requests: LoadRequest[], concurrency: number): Load {
  const tally: LoadTally = { total: 0, statuses: {}, bad: [], unanswered: [], codes: {} };
  let running = true;
  let sent = 0;
  const one = async (): Promise<void> => {
    const n = sent++;
    const r = requests[n % requests.length]!(n);
    const what = `${r.method ?? 'GET'} ${r.path}`;
    const headers: Record<string, string> = { ...r.headers };
    if (r.token) headers.authorization = `Bearer ${r.token}`;
    if (r.body !== undefined) headers['content-type'] = 'application/json';
    let res: Response;
    let text: string;
    try {
      res = await fetch(`${baseUrl}${r.path}`, {
        method: r.method ?? 'GET',
        headers,
        redirect: 'manual',
        ...(r.body !== undefined ? { body: JSON.stringify(r.body) } : {}),
      });
      text = await res.text();
    } catch (err) {
      tally.unanswered.push(`${what}: ${String((err as Error).cause ?? err)}`);
      return;
    }
    tally.total += 1;
    tally.statuses[res.status] = (tally.statuses[res.status] ?? 0) + 1;
    if (res.status === 503) {
      const code = /"code":"([A-Z_]+)"/.exec(text)?.[1] ?? '(none)';
      tally.codes[code] = (tally.codes[code] ?? 0) + 1;
      if (!res.headers.get('retry-after')) tally.bad.push(`${what} -> 503 without Retry-After: ${text.slice(0, 200)}`);
    } else if (res.status >= 500) {
      tally.bad.push(`${what} -> ${res.status}: ${text.slice(0, 200)}`);
    }
  };
  const loops = Array.from({ length: concurrency }, async () => {
    while (running) await one();
  });
  return {
    tally,
    count: (status) => tally.statuses[status] ?? 0,
    async stop() {
      running = false;
      await Promise.all(loops);
      return tally;
    },
  };
}
