import { describe, expect, it } from 'vitest';
import { matchPath, safeReturnPath, withQuery } from '../src/router/router';

describe('the dashboard router', () => {
  it('when a path matches a pattern, then its parameters, decoded', () => {
    expect(matchPath('/links/:code/stats', '/links/aZ3/stats')).toEqual({ code: 'aZ3' });
    expect(matchPath('/links/new', '/links/new')).toEqual({});
    expect(matchPath('/links/:code/stats', '/links/new')).toBeNull();
    expect(matchPath('/links', '/links/x')).toBeNull();
  });

  it('when the query changes, then the other keys stay and empty values go', () => {
    const location = { path: '/users', query: new URLSearchParams('role=admin&page=3') };
    expect(withQuery(location, { status: 'pending', page: null })).toBe('/app/users?role=admin&status=pending');
    expect(withQuery(location, { role: '', page: null })).toBe('/app/users');
  });

  it('when the sign-in screen is given a place to return to, then only a dashboard path is accepted (no open redirect)', () => {
    expect(safeReturnPath('/app/links/abc/stats?period=7d')).toBe('/app/links/abc/stats?period=7d');
    for (const hostile of [
      'https://evil.example/app/',
      '//evil.example/app/x',
      '/app\\..\\evil',
      '/api/v1/users',
      null,
      '',
    ]) {
      expect(safeReturnPath(hostile), String(hostile)).toBe('/app/links');
    }
  });
});
