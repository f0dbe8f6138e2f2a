import { describe, expect, it } from 'vitest';
import { fieldMessage, formMessage, networkProblem, otherFieldMessages, problemFrom } from '../src/api/problem';
import { plainMessage } from '../src/api/plain-words';

const envelope = (code: string, message: string, details: Array<{ field: string; message: string }> = []) => ({
  error: { code, message, details },
  requestId: 'r',
  timestamp: '2026-11-23T00:00:00.000Z',
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
    expect(p.fields).toEqual({
      original_url: 'must be an absolute http or https URL',
      short_code: 'is reserved; must be at most 8 characters',
    });
    expect(otherFieldMessages(p, ['original_url'])).toEqual(['short code: is reserved; must be at most 8 characters']);
  });

  it('when rate limited, then the message says when to try again', () => {
    expect(
      problemFrom(envelope('RATE_LIMITED', 'Too many requests'), response(429, { 'retry-after': '42' })).message,
    ).toBe('Too many requests: try again in 42 s');
  });

  it('when the body is not the envelope, or there was no answer, then a plain explanation', () => {
    expect(problemFrom('<html>bad gateway</html>', response(502))).toMatchObject({
      status: 502,
      code: 'UNEXPECTED',
      fields: {},
    });
    expect(networkProblem(new TypeError('Failed to fetch'))).toMatchObject({
      status: 0,
      message: 'Cannot reach the server (Failed to fetch)',
    });
  });
});

describe('messages about one field of a form', () => {
  it('when details name a field or its items, then they stand beside that field and nowhere else', () => {
    const p = problemFrom(
      {
        error: {
          code: 'VALIDATION_ERROR',
          message: 'Request body is invalid',
          details: [
            { field: 'tags.1', message: 'must match pattern' },
            { field: 'tags', message: 'must have at most 10 items' },
            { field: 'tagline', message: 'unknown' },
          ],
        },
        requestId: 'r',
        timestamp: '2026-11-23T00:00:00.000Z',
      },
      new Response(null, { status: 400 }),
    );
    expect(fieldMessage(p, 'tags')).toBe('tag 2: must match pattern; must have at most 10 items');
    expect(fieldMessage(p, 'max_visits')).toBeUndefined();
    expect(fieldMessage(null, 'tags')).toBeUndefined();
    expect(otherFieldMessages(p, ['tags'])).toEqual(['tagline: unknown']);
  });
});

describe("the validator's words said plainly (plain-words.ts)", () => {
  it('when the schema validator words a rule, then the field shows it as a person would say it', () => {
    expect(plainMessage('username', 'must NOT have fewer than 3 characters')).toBe(
      'must be at least 3 characters long',
    );
    expect(plainMessage('name', 'must NOT have fewer than 1 characters')).toBe('is required');
    expect(plainMessage('name', 'must NOT have more than 64 characters')).toBe('must be at most 64 characters long');
    expect(plainMessage('username', 'must match pattern "^[A-Za-z0-9._-]{3,32}$"')).toBe(
      'may contain only letters, digits, dots, underscores and hyphens',
    );
    expect(plainMessage('tags.2', 'must match pattern "^[a-zA-Z0-9-]{1,32}$"')).toBe(
      'may contain only letters, digits and hyphens',
    );
    expect(plainMessage('hostname', 'must match pattern "^[^\\s/:@]+$"')).toBe(
      'must be a host name alone, without spaces, a scheme, a port or a path',
    );
    expect(plainMessage('whatever', 'must match pattern "^x$"')).toBe('contains characters that are not allowed here');
    expect(plainMessage('max_visits', 'must be >= 1, or null')).toBe('must be at least 1, or left empty');
    expect(plainMessage('max_visits', 'must be a valid int64, or null')).toBe('must be a whole number, or left empty');
    expect(plainMessage('password', 'must NOT have fewer than 8 characters, or null')).toBe(
      'must be at least 8 characters long, or left empty',
    );
    expect(plainMessage('scopes', 'must NOT have fewer than 1 items')).toBe('choose at least one');
    expect(plainMessage('tags', 'must NOT have more than 10 items')).toBe('can have at most 10');
  });

  it('when the server wrote the message itself, then it is shown as written', () => {
    expect(plainMessage('username', 'is already taken')).toBe('is already taken');
    expect(plainMessage('original_url', 'must be an absolute http or https URL with a host')).toBe(
      'must be an absolute http or https URL with a host',
    );
  });

  it('when a refused body\'s messages all stand beside fields, then the form says to correct them, not "Request body is invalid"', () => {
    const refused = (
      details: Array<{ field: string; message: string }>,
      code = 'VALIDATION_ERROR',
      message = 'Request body is invalid',
    ) =>
      problemFrom(
        { error: { code, message, details }, requestId: 'r', timestamp: '2026-11-23T00:00:00.000Z' },
        new Response(null, { status: 400 }),
      );
    expect(formMessage(refused([{ field: 'name', message: 'x' }]), ['name'])).toBe(
      'Please correct the field marked below.',
    );
    expect(
      formMessage(
        refused([
          { field: 'name', message: 'x' },
          { field: 'scopes', message: 'y' },
        ]),
        ['name', 'scopes'],
      ),
    ).toBe('Please correct the 2 fields marked below.');
    expect(
      formMessage(
        refused([
          { field: 'name', message: 'x' },
          { field: 'first_name', message: 'is not a field of this resource' },
        ]),
        ['name'],
      ),
    ).toBe('Please correct the field marked below. First name: is not a field of this resource.');
    expect(
      formMessage(refused([], 'CONFLICT', 'A user with this username or e-mail already exists'), ['username']),
    ).toBe('A user with this username or e-mail already exists');
    expect(formMessage(null, ['name'])).toBeNull();
  });
});
