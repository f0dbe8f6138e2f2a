import { describe, expect, it } from 'vitest';
import { allLinksQuery, allLinksView } from '../src/moderation/all-links-query';

const view = (search: string) => allLinksView(new URLSearchParams(search));

describe("All links' view in the URL", () => {
  it('when the URL says nothing, then every link, newest first, page 1', () => {
    expect(view('')).toEqual({ q: '', owner: null, status: null, sort: 'newest', page: 1 });
    expect(allLinksQuery(view(''), 25)).toEqual({ page: 1, limit: 25, sort: 'created_at', order: 'desc' });
  });

  it('when it names a search, an owner and a status, then the API is asked for them (owner as user_id)', () => {
    expect(allLinksQuery(view('q=phish&owner=9007199254740991&status=disabled&sort=clicks&page=3'), 25)).toEqual({
      page: 3,
      limit: 25,
      sort: 'click_count',
      order: 'desc',
      q: 'phish',
      user_id: 9007199254740991,
      status: 'disabled',
    });
  });

  it('when a hand-edited URL holds nonsense, then the defaults, never an error', () => {
    expect(view('owner=01&status=gone&sort=best&page=0')).toEqual({
      q: '',
      owner: null,
      status: null,
      sort: 'newest',
      page: 1,
    });
    expect(view('owner=9007199254740993').owner).toBeNull(); // above 2^53-1: no id the API writes
  });
});
