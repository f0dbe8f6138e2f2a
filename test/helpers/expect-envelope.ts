import { expect } from 'vitest';
import type { ApiResponse } from './app.js';
import { ISO_UTC } from './db-state.js';

/**
 * SPEC §2: an error answers with its status, JSON, the envelope, `requestId` equal to `X-Request-Id`, an
 * ISO timestamp and `Cache-Control: no-store`. Returns the details' field names, sorted.
 */
export function expectEnvelope(res: ApiResponse, status: number, code: string): string[] {
  expect(res.status, res.text).toBe(status);
  expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
  expect(Object.keys(res.body).sort()).toEqual(['error', 'requestId', 'timestamp']);
  expect(res.body.error.code).toBe(code);
  expect(typeof res.body.error.message).toBe('string');
  expect(Array.isArray(res.body.error.details)).toBe(true);
  expect(res.body.requestId).toBe(res.headers['x-request-id']);
  expect(res.body.timestamp).toMatch(ISO_UTC);
  expect(res.headers['cache-control']).toBe('no-store');
  return (res.body.error.details as Array<{ field: string }>).map((d) => d.field).sort();
}
