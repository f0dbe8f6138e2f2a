#!/usr/bin/env node
// The `ferry` command (package.json "bin"; `npx ferry …` in a checkout). It runs the compiled tool,
// dist/src/cli/ferry.js. In a checkout (src/ present) it first builds what is stale, as `npm start` does
// (scripts/build-if-stale.mjs), with the build's output on stderr so that a `--json` result stays alone on
// stdout. A deployed copy (dist/ without src/, dev dependencies omitted) runs the compiled tool directly.
// Plain JavaScript on purpose: it runs before anything is compiled, with node alone.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import process from 'node:process';

const root = path.resolve(import.meta.dirname, '..');
if (existsSync(path.join(root, 'src'))) {
  const build = spawnSync(process.execPath, [path.join(root, 'scripts', 'build-if-stale.mjs')], { stdio: ['ignore', 2, 2] });
  if (build.status !== 0) process.exit(build.status ?? 1);
}
await import('../dist/src/cli/ferry.js');
