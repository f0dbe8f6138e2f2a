import { networkProblem, problemFrom, type Problem } from './problem';

export type Outcome<T> = { ok: true; data: T; response: Response } | { ok: false; problem: Problem };

/** An openapi-fetch call turned into data or a Problem (an error envelope, or no answer at all). */
export async function outcome<T>(
  call: Promise<{ data?: T; error?: unknown; response: Response }>,
): Promise<Outcome<T>> {
  try {
    const { data, error, response } = await call;
    if (response.ok) return { ok: true, data: data as T, response };
    return { ok: false, problem: problemFrom(error, response) };
  } catch (err) {
    return { ok: false, problem: networkProblem(err) };
  }
}
