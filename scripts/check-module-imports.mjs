// Checks the module boundaries of src/modules: a module imports another only through its index.ts, and the
// folder graph of those imports has no circle. Inside a module whose folders are layers (LAYERS), a file
// imports its own folder and the layers before it, never a later one, a sibling of its own layer or the
// module's root files (its wiring), and no files import each other in a circle.
// Run: node scripts/check-module-imports.mjs
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import process from 'node:process';
import console from 'node:console';

/** Per layered module, its folders from the bottom up; folders on one line are siblings that do not import each other. */
const LAYERS = {
  clicks: [['event'], ['rollups'], ['transport', 'stats', 'records']],
};

const root = resolve('src/modules');
const files = (dir) => readdirSync(dir).flatMap((n) => {
  const p = join(dir, n);
  return statSync(p).isDirectory() ? files(p) : p.endsWith('.ts') ? [p] : [];
});
const moduleOf = (p) => relative(root, p).split(sep)[0];
/** The folder of `p` inside its module, or null for the module's root files. */
const folderOf = (p) => {
  const parts = relative(root, p).split(sep);
  return parts.length > 2 ? parts[1] : null;
};
const edges = new Map();
const fileEdges = new Map();
const problems = [];

function checkLayer(file, target, spec) {
  const layers = LAYERS[moduleOf(file)];
  const from = folderOf(file);
  const to = folderOf(target);
  if (!layers || from === null || from === to) return;
  const rank = (folder) => layers.findIndex((line) => line.includes(folder));
  const where = `${relative('.', file)} imports ${spec}`;
  if (rank(from) < 0) problems.push(`${relative('.', file)}: folder ${from} is in no layer of LAYERS (scripts/check-module-imports.mjs)`);
  else if (to === null) problems.push(`${where}: a layer never imports the module's root files (its wiring)`);
  else if (rank(to) < 0) problems.push(`${where}: folder ${to} is in no layer of LAYERS (scripts/check-module-imports.mjs)`);
  else if (rank(to) > rank(from)) problems.push(`${where}: ${from} may not import the later layer ${to}`);
  else if (rank(to) === rank(from)) problems.push(`${where}: ${from} and ${to} are siblings of one layer and do not import each other`);
}

for (const file of files(root)) {
  const from = moduleOf(file);
  for (const [, spec] of readFileSync(file, 'utf8').matchAll(/(?:from|import)\s*\(?\s*'(\.[^']+)'/g)) {
    const target = resolve(dirname(file), spec);
    if (!target.startsWith(root + sep)) continue;
    const to = moduleOf(target);
    if (to === from) {
      checkLayer(file, target, spec);
      if (LAYERS[from]) {
        if (!fileEdges.has(file)) fileEdges.set(file, new Set());
        fileEdges.get(file).add(target.replace(/\.js$/, '.ts'));
      }
      continue;
    }
    if (relative(join(root, to), target) !== 'index.js') problems.push(`${relative('.', file)} imports ${spec}: not ${to}/index.ts`);
    if (!edges.has(from)) edges.set(from, new Set());
    edges.get(from).add(to);
  }
}

/** Reports every circle of `graph` (node -> set of nodes) once per node it enters by. */
function circles(graph, name) {
  const state = new Map();
  const walk = (m, path) => {
    if (state.get(m) === 'done') return;
    if (state.get(m) === 'open') { problems.push(`circle: ${[...path.slice(path.indexOf(m)), m].map(name).join(' -> ')}`); return; }
    state.set(m, 'open');
    for (const n of graph.get(m) ?? []) walk(n, [...path, m]);
    state.set(m, 'done');
  };
  for (const m of graph.keys()) walk(m, []);
}
circles(edges, (m) => m);
circles(fileEdges, (f) => relative('.', f));

for (const [m, to] of edges) console.log(`${m} -> ${[...to].sort().join(', ')}`);
for (const [m, layers] of Object.entries(LAYERS)) console.log(`${m}: ${layers.map((l) => l.join(' | ')).join(' -> ')} -> root files`);
if (problems.length > 0) { console.error(problems.join('\n')); process.exit(1); }
console.log('no circle, no internal import between modules, layers kept');
