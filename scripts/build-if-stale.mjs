#!/usr/bin/env node
// Builds (`npm run build`: the server's tsc and the dashboard's vite build) only when dist/ is missing or was
// built from other sources than the ones present; `npm start`, `npm run worker` and `npm run migrate` call it
// first. Building on every start made `npm start` take 45-80 s on a 2-core machine; a current build now
// starts in about a second (docs/operating.md, "Running").
//
// The stamp is a SHA-256 over the path and content of every input of the build (src/, web/ without its tests,
// the TypeScript and package manifests), written to dist/.build-stamp after every successful `npm run build`
// (its postbuild step runs this script with --stamp). Content, not
// modification times: a checkout or a copy changes mtimes without changing what the build would produce.
// Plain JavaScript on purpose: it runs before anything is compiled, with node alone.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import process from 'node:process';

const root = path.resolve(import.meta.dirname, '..');
const STAMP = path.join(root, 'dist', '.build-stamp');
const INPUT_DIRS = ['src', 'web'];
const INPUT_FILES = ['package.json', 'package-lock.json', 'tsconfig.json', 'tsconfig.build.json'];
const SKIP = new Set(['node_modules', 'test']);
const OUTPUTS = ['dist/src/server.js', 'dist/src/worker.js', 'dist/src/cli/ferry.js', 'dist/web/index.html'];

function* files(dir) {
  for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
    if (SKIP.has(entry.name)) continue;
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) yield* files(full);
    else if (entry.isFile()) yield full;
  }
}

function sourceHash() {
  const hash = createHash('sha256');
  const inputs = [
    ...INPUT_DIRS.flatMap((d) => [...files(path.join(root, d))]),
    ...INPUT_FILES.map((f) => path.join(root, f)).filter((f) => existsSync(f) && statSync(f).isFile()),
  ];
  for (const file of inputs) {
    hash.update(path.relative(root, file));
    hash.update('\0');
    hash.update(readFileSync(file));
    hash.update('\0');
  }
  return hash.digest('hex');
}

const complete = OUTPUTS.every((f) => existsSync(path.join(root, f)));
// A deployed copy: the built output without the sources (a container image, a release). There is nothing to
// compare and nothing to build with (dev dependencies are not installed): run what was built.
if (!existsSync(path.join(root, 'src'))) {
  if (complete) process.exit(0);
  process.stderr.write(`ferry: neither a build (${OUTPUTS.join(', ')}) nor the sources to build it from are here\n`);
  process.exit(1);
}

const wanted = sourceHash();
if (process.argv.includes('--stamp')) {
  writeFileSync(STAMP, `${wanted}\n`);
  process.exit(0);
}
const built = existsSync(STAMP) ? readFileSync(STAMP, 'utf8').trim() : null;
if (built === wanted && complete) process.exit(0);
// A checkout installed for production (npm ci --omit=dev) whose sources differ from the build: the build
// needs TypeScript and Vite, which are dev dependencies.
if (
  !existsSync(path.join(root, 'node_modules', 'typescript')) ||
  !existsSync(path.join(root, 'node_modules', 'vite'))
) {
  process.stderr.write(
    'ferry: the build in dist/ is missing or older than the sources, and TypeScript or Vite is not installed (npm ci --omit=dev?): build where the dev dependencies are (npm ci && npm run build), then copy or keep dist/\n',
  );
  process.exit(1);
}

process.stderr.write(
  built === null || !complete
    ? 'ferry: no build yet; building (npm run build)\n'
    : 'ferry: sources changed since the last build; building (npm run build)\n',
);
const result = spawnSync('npm', ['run', 'build'], { cwd: root, stdio: 'inherit' });
process.exit(result.status ?? 1);
