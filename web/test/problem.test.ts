import { describe, expect, it } from 'vitest';
import { fieldMessage, networkProblem, otherFieldMessages, problemFrom } from '../src/api/problem';

const envelope = (code: string, message: string, details: Array<{ field: string; message: string }> = []) => ({
  error: { code, message, details }, requestId: 'r', timestamp: '2026-11-23T00:00:00.000Z',
});
const response = (status: number, headers: Record<string, string> = {}) => new Response(null, { status, headers });

describe('a failed API call as the dashboard shows it', () => {
  it('when the envelope has details, then each message is kept under its field, several for one field joined', () => {
    const p = problemFrom(
      envelope('VALIDATION_ERROR', 'Request body is invalid', [
        { field: 'original_url', message: 'must be an absolute http or https URL' },
        { field: 'short_code', message: 'is reserved' },
        { field: 'short_code', message: 'must be at most 8 characters' },
      ]),
      response(400),
    );
    expect(p).toMatchObject({ status: 400, code: 'VALIDATION_ERROR', message: 'Request body is invalid' });
    expect(p.fields).toEqual({ original_url: 'must be an absolute http or https URL', short_code: 'is reserved; must be at most 8 characters' });
    expect(otherFieldMessages(p, ['original_url'])).toEqual(['short_code: is reserved; must be at most 8 characters']);
  });

  it('when rate limited, then the message says when to try again', () => {
    expect(problemFrom(envelope('RATE_LIMITED', 'Too many requests'), response(429, { 'retry-after': '42' })).message).toBe('Too many requests: try again in 42 s');
  });

  it('when the body is not the envelope, or there was no answer, then a plain explanation', () => {
    expect(problemFrom('<html>bad gateway</html>', response(502))).toMatchObject({ status: 502, code: 'UNEXPECTED', fields: {} });
    expect(networkProblem(new TypeError('Failed to fetch'))).toMatchObject({ status: 0, message: 'Cannot reach the server (Failed to fetch)' });
  });
});

describe('messages about one field of a form', () => {
  it('when details name a field or its items, then they stand beside that field and nowhere else', () => {
    const p = problemFrom(
      { error: { code: 'VALIDATION_ERROR', message: 'Request body is invalid', details: [{ field: 'tags.1', message: 'must match pattern' }, { field: 'tags', message: 'must have at most 10 items' }, { field: 'tagline', message: 'unknown' }] }, requestId: 'r', timestamp: '2026-11-23T00:00:00.000Z' },
      new Response(null, { status: 400 }),
    );
    expect(fieldMessage(p, 'tags')).toBe('1: must match pattern; must have at most 10 items');
    expect(fieldMessage(p, 'max_visits')).toBeUndefined();
    expect(fieldMessage(null, 'tags')).toBeUndefined();
    expect(otherFieldMessages(p, ['tags'])).toEqual(['tagline: unknown']);
  });
});
