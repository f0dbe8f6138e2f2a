// Checks the module boundaries of src/modules (issue 15): a module imports another only through its index.ts,
// and the folder graph of those imports has no circle. Run: node scripts/check-module-imports.mjs
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import process from 'node:process';
import console from 'node:console';

const root = resolve('src/modules');
const files = (dir) => readdirSync(dir).flatMap((n) => {
  const p = join(dir, n);
  return statSync(p).isDirectory() ? files(p) : p.endsWith('.ts') ? [p] : [];
});
const moduleOf = (p) => relative(root, p).split(sep)[0];
const edges = new Map();
const problems = [];
for (const file of files(root)) {
  const from = moduleOf(file);
  for (const [, spec] of readFileSync(file, 'utf8').matchAll(/(?:from|import)\s*\(?\s*'(\.[^']+)'/g)) {
    const target = resolve(dirname(file), spec);
    if (!target.startsWith(root + sep)) continue;
    const to = moduleOf(target);
    if (to === from) continue;
    if (relative(join(root, to), target) !== 'index.js') problems.push(`${relative('.', file)} imports ${spec}: not ${to}/index.ts`);
    if (!edges.has(from)) edges.set(from, new Set());
    edges.get(from).add(to);
  }
}
const state = new Map();
const walk = (m, path) => {
  if (state.get(m) === 'done') return;
  if (state.get(m) === 'open') { problems.push(`circle: ${[...path.slice(path.indexOf(m)), m].join(' -> ')}`); return; }
  state.set(m, 'open');
  for (const n of edges.get(m) ?? []) walk(n, [...path, m]);
  state.set(m, 'done');
};
for (const m of edges.keys()) walk(m, []);
for (const [m, to] of edges) console.log(`${m} -> ${[...to].sort().join(', ')}`);
if (problems.length > 0) { console.error(problems.join('\n')); process.exit(1); }
console.log('no circle, no internal import between modules');
