import { expect } from 'vitest';
import type { ApiResponse, TestApp } from '../../helpers/app.js';

export interface ImportJob {
  id: number;
  state: string;
  progress: Record<string, number>;
  items: Array<{
    seq: number;
    source: string;
    outcome: string;
    short_code: string | null;
    message: string | null;
    error_code: string | null;
    visits: number;
  }>;
  error: string | null;
}

/** Waits for a started job to leave `running`, reading it as a client would (GET of its Location). */
export async function finishedJob(t: TestApp, started: ApiResponse, token: string): Promise<ImportJob> {
  expect(started.status, started.text).toBe(202);
  const location = started.headers.location as string;
  for (let i = 0; i < 3000; i += 1) {
    const job = await t.request({ url: location, token });
    expect(job.status).toBe(200);
    if ((job.body as ImportJob).state !== 'running') return job.body as ImportJob;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error('the import did not finish');
}

/** POST /api/v1/imports with a CSV body (`query`: source, owner, …). */
export const postCsv = (t: TestApp, token: string, csv: string, query = 'source=csv'): Promise<ApiResponse> =>
  t.request({
    method: 'POST',
    url: `/api/v1/imports?${query}`,
    token,
    headers: { 'content-type': 'text/csv' },
    payload: csv,
  });

/** Imports a CSV body and waits for the job's end. */
export const importCsv = async (t: TestApp, token: string, csv: string, query?: string): Promise<ImportJob> =>
  finishedJob(t, await postCsv(t, token, csv, query), token);

/** The job's item for a source reference ("line 3", "/code", "domain/code"). */
export const itemOf = (job: ImportJob, source: string) => {
  const item = job.items.find((i) => i.source === source);
  expect(item, `item ${source} in ${JSON.stringify(job.items)}`).toBeDefined();
  return item!;
};
