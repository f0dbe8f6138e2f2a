import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

// scripts/check-module-imports.mjs, as `npm run lint` runs it, on small fake src/ trees: each rule can fail.

const made: string[] = [];
afterAll(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

/** Writes the files (path under src/ -> content) into a fresh folder and returns its src/. */
function tree(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), 'ferry-imports-'));
  made.push(root);
  for (const [path, text] of Object.entries(files)) {
    const file = join(root, 'src', path);
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, text);
  }
  return join(root, 'src');
}

function check(src: string): { status: number | null; stdout: string; stderr: string } {
  const run = spawnSync(process.execPath, ['scripts/check-module-imports.mjs', src], { encoding: 'utf8' });
  return { status: run.status, stdout: run.stdout, stderr: run.stderr };
}

/** A tree that keeps every rule: each layer imports only the ones before it, modules through index.ts. */
const clean: Record<string, string> = {
  'lib/text.ts': `export const upper = (s: string) => s.toUpperCase();\n`,
  'config.ts': `import { upper } from './lib/text.js';\n`,
  'infra/store.ts': `import { name } from '../config.js';\n`,
  'plugins/auth.ts': `import { store } from '../infra/store.js';\n`,
  'app-module.ts': `import type { Auth } from './plugins/auth.js';\n`,
  'modules/users/users.service.ts': `import type { AppModule } from '../../app-module.js';\n`,
  'modules/users/index.ts': `export { users } from './users.service.js';\n`,
  'modules/links/links.service.ts': `import { users } from '../users/index.js';\n`,
  'modules/links/index.ts': `export { links } from './links.service.js';\n`,
  'app.ts': `import { links } from './modules/links/index.js';\nimport { auth } from './plugins/auth.js';\n`,
  'cli/program.ts': `import { users } from '../modules/users/index.js';\n`,
};

/** Each broken rule, as the checker names it, after `src/<file> imports <specifier>: `. */
const later = (from: string, to: string) => `${from} imports nothing from ${to} (layers: `;
const pastIndex = (m: string) => `reach the module ${m} through src/modules/${m}/index.ts only`;

describe('scripts/check-module-imports.mjs', () => {
  it('when every rule is kept, then it exits 0 and says so', () => {
    const result = check(tree(clean));
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
    expect(result.stdout).toContain('no circle');
  });

  it('when a lower layer imports a later one, then each such import is named with the rule it breaks', () => {
    const result = check(
      tree({
        ...clean,
        'plugins/idempotency.ts': `import { users } from '../modules/users/index.js';\n`,
        'infra/client-errors.ts': `import { auth } from '../plugins/auth.js';\n`,
        'db/migrator.ts': `import type { Links } from '../modules/links/index.js';\n`,
        'lib/readiness.ts': `export { store } from '../infra/store.js';\n`,
        'modules/links/wiring.ts': `import { app } from '../../app.js';\n`,
        'plugins/cli-help.ts': `export const help = () => import('../cli/program.js');\n`,
      }),
    );
    expect(result.status).toBe(1);
    for (const line of [
      `src/plugins/idempotency.ts imports ../modules/users/index.js: ${later('plugins', 'modules')}`,
      `src/infra/client-errors.ts imports ../plugins/auth.js: ${later('db and infra', 'plugins')}`,
      `src/db/migrator.ts imports ../modules/links/index.js: ${later('db and infra', 'modules')}`,
      `src/lib/readiness.ts imports ../infra/store.js: ${later('lib', 'db and infra')}`,
      `src/modules/links/wiring.ts imports ../../app.js: ${later('modules', 'the roots')}`,
      `src/plugins/cli-help.ts imports ../cli/program.js: ${later('plugins', 'the roots')}`,
    ])
      expect(result.stderr).toContain(line);
  });

  it('when a module is reached past its index.ts, from outside src/modules or from a module, then it is named', () => {
    const result = check(
      tree({
        ...clean,
        'shared-state.ts': `import { users } from './modules/users/users.service.js';\n`,
        'modules/orders/orders.service.ts': `import type { Users } from '../users/users.service.js';\n`,
      }),
    );
    expect(result.status).toBe(1);
    expect(result.stderr).toContain(
      `src/shared-state.ts imports ./modules/users/users.service.js: ${pastIndex('users')}`,
    );
    expect(result.stderr).toContain(
      `src/modules/orders/orders.service.ts imports ../users/users.service.js: ${pastIndex('users')}`,
    );
  });

  it('when files import each other in a circle of type-only imports, then the circle and its tangle are named', () => {
    const result = check(
      tree({
        ...clean,
        'cli/command.ts': `import type { Program } from './program.js';\n`,
        'cli/program.ts': `import type { Command } from './commands/index.js';\n`,
        'cli/commands/index.ts': `import type { Command } from '../command.js';\nexport type { A } from './admin.js';\n`,
        'cli/commands/admin.ts': `import type { Command } from '../command.js';\n`,
      }),
    );
    expect(result.status).toBe(1);
    expect(result.stderr).toContain(
      'files in a circle (type-only imports count): ' +
        'src/cli/command.ts -> src/cli/program.ts -> src/cli/commands/index.ts -> src/cli/command.ts; ' +
        'in the same tangle: src/cli/commands/admin.ts',
    );
  });

  it('when two modules import each other through their index.ts, then the circle of modules is named', () => {
    const users = `import type { Links } from '../links/index.js';\n`;
    const result = check(tree({ ...clean, 'modules/users/users.service.ts': users }));
    expect(result.status).toBe(1);
    expect(result.stderr).toContain('modules in a circle: links -> users -> links');
  });

  it('when a folder of a layered module (clicks) imports a later layer, then it is named', () => {
    const result = check(
      tree({
        ...clean,
        'modules/clicks/event/click-event.ts': `import { rollup } from '../rollups/rollup.js';\n`,
        'modules/clicks/rollups/rollup.ts': `export const rollup = 1;\n`,
        'modules/clicks/index.ts': `export { event } from './event/click-event.js';\n`,
      }),
    );
    expect(result.status).toBe(1);
    expect(result.stderr).toContain(
      'src/modules/clicks/event/click-event.ts imports ../rollups/rollup.js: ' +
        'event may not import the later layer rollups',
    );
  });
});
