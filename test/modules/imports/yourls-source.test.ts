import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isUnreadable, type ImportVisit } from '../../../src/modules/imports/import-item.js';
import { readSource } from '../../../src/modules/imports/sources/index.js';
import { createMysqlDatabase, type TestMysqlDatabase } from '../../helpers/mysql.js';
import { missing, unless } from '../../helpers/skip.js';
import { seedYourls } from './fixtures/yourls-schema.js';

describe.skipIf(missing.mysql !== null)(unless(missing.mysql, 'YOURLS reader on MariaDB'), () => {
  let db: TestMysqlDatabase;
  beforeAll(async () => {
    db = await createMysqlDatabase(process.env.TEST_MYSQL_URL!);
    await seedYourls(db, 'yrl_');
  });
  afterAll(async () => db?.drop());

  it('when YOURLS tables are read with their prefix, then every keyword comes with its own click log only', async () => {
    const items: {
      code: string;
      title: string | null;
      createdAt: number | null;
      visitCount: number | null;
      visits: ImportVisit[];
    }[] = [];
    for await (const e of readSource({ source: 'yourls', database: db.url, tablePrefix: 'yrl_' })) {
      if (isUnreadable(e)) throw new Error(e.reason);
      const visits: ImportVisit[] = [];
      for await (const v of e.visits!(null)) visits.push(v);
      items.push({ code: e.code, title: e.title, createdAt: e.createdAt, visitCount: e.visitCount, visits });
    }
    expect(items.map((i) => i.code)).toEqual(['Abc', 'abc', 'my-long-keyword-2020', 'zz']);
    const abc = items[1]!;
    expect(abc).toMatchObject({ title: 'ABC page', createdAt: Date.parse('2020-01-02T03:04:05Z'), visitCount: 3 });
    expect(abc.visits).toEqual([
      {
        key: expect.stringMatching(/^\d+$/),
        at: Date.parse('2020-01-05T10:00:00Z'),
        referrer: null,
        userAgent: expect.stringContaining('Firefox'),
        ip: '203.0.113.9',
        country: 'FR',
        isBot: null,
      },
      {
        key: expect.stringMatching(/^\d+$/),
        at: Date.parse('2020-01-06T11:00:00Z'),
        referrer: 'https://news.example/',
        userAgent: expect.stringContaining('Googlebot'),
        ip: '203.0.113.10',
        country: null,
        isBot: null,
      },
      {
        key: expect.stringMatching(/^\d+$/),
        at: Date.parse('2020-01-04T09:00:00Z'),
        referrer: 'https://t.co/x',
        userAgent: 'curl/8.0',
        ip: '2001:db8::1',
        country: 'US',
        isBot: null,
      },
    ]);
    expect(items[0]!.visits).toEqual([]);
    expect(items[2]!.visits.map((v) => v.country)).toEqual(['DE']);
    expect(items[2]!.title).toBeNull();
    expect(items[3]!.title).toBe('Ünïcode ✓');
  });

  it('when an item is taken without reading its visits, then the next item still gets only its own', async () => {
    const codes: [string, number][] = [];
    for await (const e of readSource({ source: 'yourls', database: db.url, tablePrefix: 'yrl_' })) {
      if (isUnreadable(e)) throw new Error(e.reason);
      let n = 0;
      if (e.code !== 'abc') for await (const _ of e.visits!(null)) n += 1;
      codes.push([e.code, n]);
    }
    expect(codes).toEqual([
      ['Abc', 0],
      ['abc', 0],
      ['my-long-keyword-2020', 1],
      ['zz', 0],
    ]);
  });

  it('when the prefix names no tables, then the import stops with the database error', async () => {
    const read = async () => {
      for await (const _ of readSource({ source: 'yourls', database: db.url, tablePrefix: 'none_' })) void _;
    };
    await expect(read()).rejects.toThrow(/none_url/);
  });
});
