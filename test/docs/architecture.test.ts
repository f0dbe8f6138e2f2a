import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

// docs/architecture.md cannot drift from src/ unnoticed: its Modules table names every folder of src/modules
// with the modules it imports, and every source file it names exists.

const doc = readFileSync('docs/architecture.md', 'utf8');
const folders = readdirSync('src/modules', { withFileTypes: true })
  .filter((d) => d.isDirectory())
  .map((d) => d.name)
  .sort();

/** The rows of the document's Modules table: module -> the modules it imports (sorted; `—` for none). */
function modulesTable(text: string): Map<string, string[]> {
  const section = text.split(/^## /m).find((s) => s.startsWith('Modules\n')) ?? '';
  const rows = new Map<string, string[]>();
  for (const line of section.split('\n')) {
    const row = /^\| `([a-z0-9-]+)` \|.*\| ([^|]*) \|$/.exec(line);
    if (!row) continue;
    const imports = row[2]!.trim();
    rows.set(
      row[1]!,
      imports === '—'
        ? []
        : imports
            .split(',')
            .map((m) => m.trim())
            .sort(),
    );
  }
  return rows;
}

/** Folders of src/modules that the table does not name, and names in the table that are no folder. */
function drift(text: string): { missing: string[]; unknown: string[] } {
  const named = modulesTable(text);
  return {
    missing: folders.filter((f) => !named.has(f)),
    unknown: [...named.keys()].filter((n) => !folders.includes(n)),
  };
}

describe('docs/architecture.md', () => {
  it('when a folder of src/modules is not in its Modules table, then the folder is named as missing', () => {
    expect(drift(doc)).toEqual({ missing: [], unknown: [] });
    const withoutDomains = doc.replace(/^\| `domains` \|.*\n/m, '');
    expect(drift(withoutDomains)).toEqual({ missing: ['domains'], unknown: [] });
  });

  it('when its Modules table is read, then each module imports exactly the modules npm run check:modules finds', () => {
    const run = spawnSync(process.execPath, ['scripts/check-module-imports.mjs'], { encoding: 'utf8' });
    expect(run.status, run.stderr).toBe(0);
    const found = new Map<string, string[]>(folders.map((f) => [f, []]));
    for (const line of run.stdout.split('\n')) {
      const edge = /^([a-z0-9-]+) -> (.+)$/.exec(line);
      if (edge) found.set(edge[1]!, edge[2]!.split(', ').sort());
    }
    expect(Object.fromEntries(modulesTable(doc))).toEqual(Object.fromEntries(found));
  });

  it('when it names a source file, then that file exists', () => {
    const files = ['src', 'test', 'scripts', 'bench', 'web']
      .flatMap((dir) => readdirSync(dir, { recursive: true, encoding: 'utf8' }).map((f) => `${dir}/${f}`))
      .filter((f) => !f.includes('node_modules'));
    // A name with a folder must end a real path; a bare `name.ts` must be some file's name; `<name>.routes.ts`
    // and `.module.ts` are patterns, not files.
    const named = [...new Set(doc.match(/(?<![<>\w.])[\w/-]+\.(?:ts|tsx|mjs)\b/g) ?? [])];
    const absent = named.filter((n) => !files.some((f) => f === n || f.endsWith(`/${n}`)));
    expect(named.length).toBeGreaterThan(50);
    expect(absent).toEqual([]);
  });
});
