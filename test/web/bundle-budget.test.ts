import { mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  budgetReport,
  bundleBudget,
  firstLoadChunks,
  scriptSizes,
  type OutputFile,
} from '../../web/build/bundle-budget.js';

const chunk = (fileName: string, code: string, opts: Partial<OutputFile> = {}): OutputFile => ({
  type: 'chunk',
  fileName,
  code,
  imports: [],
  ...opts,
});

/** An entry importing a shared chunk statically, and a screen loaded with import(). */
const bundle: Record<string, OutputFile> = {
  'assets/index.js': chunk('assets/index.js', 'import "./shared.js";'.repeat(50), {
    isEntry: true,
    imports: ['assets/shared.js'],
  }),
  'assets/shared.js': chunk('assets/shared.js', 'export const x = 1;'.repeat(50)),
  'assets/Stats.js': chunk('assets/Stats.js', 'export default 2;'.repeat(50), { imports: ['assets/shared.js'] }),
  'assets/index.css': { type: 'asset', fileName: 'assets/index.css', source: 'body { color: red }'.repeat(50) },
};

describe('the bundle budget', () => {
  it('when chunks import each other, then the first load is the entry and its static imports, not the lazy screen', () => {
    expect([...firstLoadChunks(bundle)].sort()).toEqual(['assets/index.js', 'assets/shared.js']);
    expect(scriptSizes(bundle).map((s) => [s.file, s.firstLoad])).toEqual(
      expect.arrayContaining([
        ['assets/index.js', true],
        ['assets/shared.js', true],
        ['assets/Stats.js', false],
      ]),
    );
  });

  it('when the first load is over the budget, then the report says OVER and the build fails', async () => {
    const sizes = scriptSizes(bundle);
    const firstLoad = sizes.filter((s) => s.firstLoad).reduce((n, s) => n + s.gzipBytes, 0);
    expect(budgetReport(sizes, firstLoad).ok).toBe(true);
    const over = budgetReport(sizes, firstLoad - 1);
    expect(over.ok).toBe(false);
    expect(over.lines[0]).toMatch(
      /^bundle budget: first load [\d.]+ kB of gzipped JavaScript, budget [\d.]+ kB: OVER$/,
    );

    const dir = mkdtempSync(path.join(tmpdir(), 'ferry-budget-'));
    try {
      mkdirSync(path.join(dir, 'assets'));
      const plugin = bundleBudget(firstLoad - 1);
      const writeBundle = plugin.writeBundle as (this: unknown, options: { dir: string }, b: unknown) => void;
      const context = {
        error: (message: string) => {
          throw new Error(message);
        },
      };
      expect(() => writeBundle.call(context, { dir }, bundle)).toThrow(/over the budget/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('when the build writes its files, then gzip and brotli variants lie beside each compressible asset', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'ferry-budget-'));
    try {
      const writeBundle = bundleBudget().writeBundle as (this: unknown, options: { dir: string }, b: unknown) => void;
      mkdirSync(path.join(dir, 'assets'));
      writeBundle.call({ error: () => undefined }, { dir }, bundle);
      expect(readdirSync(path.join(dir, 'assets')).sort()).toEqual([
        'Stats.js.br',
        'Stats.js.gz',
        'index.css.br',
        'index.css.gz',
        'index.js.br',
        'index.js.gz',
        'shared.js.br',
        'shared.js.gz',
      ]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
