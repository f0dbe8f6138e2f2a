import { describe, expect, it } from 'vitest';
import type { Link } from '../src/api/client';
import { createBody, EMPTY_LINK_VALUES, patchBody, tagsFromText, valuesFromLink } from '../src/links/link-values';

const link: Link = {
  id: 1,
  short_code: 'abc',
  short_url: 'http://localhost/abc',
  domain: null,
  original_url: 'https://example.com/a',
  created_at: '2026-11-23T10:00:00.000Z',
  updated_at: '2026-11-23T10:00:00.000Z',
  expires_at: null,
  click_count: 0,
  human_clicks: 0,
  bot_clicks: 0,
  user_id: 1,
  max_visits: 5,
  forward_query: false,
  tags: ['one', 'two'],
  has_password: true,
  title: 'The A page',
  aliases: ['summer-sale'],
  disabled: false,
  disabled_reason: null,
  preview: null,
  fallback_url: null,
  health: { status: 'unknown', checked_at: null, http_status: null, error: null, since: null },
};

describe('the link form and the bodies it sends', () => {
  it('when creating, then only the fields filled in are sent, tags split on commas and spaces', () => {
    expect(createBody({ ...EMPTY_LINK_VALUES, original_url: ' https://example.com/x ' })).toEqual({
      original_url: 'https://example.com/x',
    });
    expect(
      createBody({
        ...EMPTY_LINK_VALUES,
        original_url: 'https://e.com',
        max_visits: '3',
        password: 'pw-pw-pw-pw',
        tags: 'a, b  c,',
        forward_query: true,
      }),
    ).toEqual({
      original_url: 'https://e.com',
      max_visits: 3,
      password: 'pw-pw-pw-pw',
      tags: ['a', 'b', 'c'],
      forward_query: true,
    });
    expect(tagsFromText(' , ')).toEqual([]);
  });

  it('when a number is mistyped, then it is sent as typed, so the API names what is wrong beside the field', () => {
    expect(createBody({ ...EMPTY_LINK_VALUES, original_url: 'https://e.com', max_visits: 'ten' }).max_visits).toBe(
      'ten',
    );
  });

  it('when editing, then the patch holds only what changed; an emptied field is null (cleared)', () => {
    const values = valuesFromLink(link);
    expect(values).toMatchObject({ max_visits: '5', tags: 'one, two', password: '', removePassword: false });
    expect(patchBody(link, values)).toEqual({});
    expect(patchBody(link, { ...values, original_url: 'https://example.com/b' })).toEqual({
      original_url: 'https://example.com/b',
    });
    expect(patchBody(link, { ...values, max_visits: '', tags: '' })).toEqual({ max_visits: null, tags: null });
    expect(patchBody(link, { ...values, tags: 'two,one' })).toEqual({ tags: ['two', 'one'] });
    expect(values.aliases).toBe('summer-sale');
    expect(patchBody(link, { ...values, aliases: 'summer-sale Winter_2026' })).toEqual({
      aliases: ['summer-sale', 'Winter_2026'],
    });
    expect(patchBody(link, { ...values, aliases: ' ' })).toEqual({ aliases: null });
    expect(createBody({ ...EMPTY_LINK_VALUES, original_url: 'https://e.com', aliases: 'a-b, C_d' })).toEqual({
      original_url: 'https://e.com',
      aliases: ['a-b', 'C_d'],
    });
    expect(values.title).toBe('The A page');
    expect(patchBody(link, { ...values, title: '  ' })).toEqual({ title: null });
    expect(patchBody(link, { ...values, title: 'Renamed ' })).toEqual({ title: 'Renamed' });
    expect(patchBody(link, { ...values, forward_query: true })).toEqual({ forward_query: true });
  });

  it('when the password is left empty it is kept; a new one replaces it; "remove" clears it', () => {
    expect(patchBody(link, { ...valuesFromLink(link), password: 'new-password' })).toEqual({
      password: 'new-password',
    });
    expect(patchBody(link, { ...valuesFromLink(link), removePassword: true })).toEqual({ password: null });
    expect(patchBody({ ...link, has_password: false }, { ...valuesFromLink(link), removePassword: true })).toEqual({});
  });
});
