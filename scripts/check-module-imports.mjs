// Checks the import rules of all of src/ (STYLE, "The shape we want"; issue 36 item 6):
// 1. Layers point one way: lib <- db, infra <- plugins <- modules <- the roots (app*.ts, shared-state.ts,
//    server.ts, worker.ts, cli/). A file imports nothing from a later layer: plugins, infra, db and lib nothing
//    from modules; infra, db and lib nothing from plugins; nothing below the roots from a root.
// 2. A module is reached through its index.ts only, from outside src/modules and from another module.
// 3. No two files import each other in a circle, `import type` included (a type-only circle still ties the two
//    files together: neither can move without the other), and the modules' folder graph has no circle.
// 4. Inside a module whose folders are layers (LAYERS), a file imports its own folder and the layers before it,
//    never a later one, a sibling of its own layer or the module's root files (its wiring).
// Run: node scripts/check-module-imports.mjs [src folder, default src]; test/scripts/check-module-imports.test.ts
// feeds it small trees with each kind of fault.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import process from 'node:process';
import console from 'node:console';
import ts from 'typescript';

/** Per layered module, its folders from the bottom up; folders on one line are siblings: neither imports the other. */
const LAYERS = {
  clicks: [['event'], ['rollups'], ['transport', 'stats', 'records']],
};

/** The layers of src/, from the bottom up: a file imports its own layer and the ones before it. */
const RANKS = ['lib', 'db and infra', 'plugins', 'modules', 'the roots'];
/**
 * Two root files are contracts the layers below read, so each is placed in the layer it belongs to: config.ts
 * (one typed object read by db, infra, plugins and modules; it imports lib only) and app-module.ts (the AppModule
 * shape a module returns to the composition; it imports a type of plugins).
 */
const ROOT_FILES_IN_LAYERS = { 'config.ts': 'db and infra', 'app-module.ts': 'plugins' };
const FOLDER_LAYERS = {
  lib: 'lib',
  types: 'lib',
  db: 'db and infra',
  infra: 'db and infra',
  plugins: 'plugins',
  modules: 'modules',
  // config.ts's sections of variables sit where config.ts does.
  config: 'db and infra',
};

const tsFiles = (dir) =>
  readdirSync(dir)
    .sort()
    .flatMap((n) => {
      const p = join(dir, n);
      return statSync(p).isDirectory() ? tsFiles(p) : /\.tsx?$/.test(n) ? [p] : [];
    });

/** Every relative import of `file`, static, dynamic, re-exported or type-only, as the .ts file it names. */
function importsOf(file) {
  const { importedFiles } = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
  return importedFiles
    .filter((i) => i.fileName.startsWith('.'))
    .map((i) => ({ spec: i.fileName, target: resolve(dirname(file), i.fileName).replace(/\.js$/, '.ts') }));
}

/** Walks `src` and returns every broken rule as one readable line (none when the tree keeps them all). */
export function checkImports(src) {
  const root = resolve(src);
  const modules = join(root, 'modules');
  const rel = (p) => relative(root, p).split(sep).join('/');
  const layerOf = (p) => {
    const parts = rel(p).split('/');
    return parts.length === 1
      ? (ROOT_FILES_IN_LAYERS[parts[0]] ?? 'the roots')
      : (FOLDER_LAYERS[parts[0]] ?? 'the roots');
  };
  const moduleOf = (p) => (p.startsWith(modules + sep) ? relative(modules, p).split(sep)[0] : null);
  const problems = [];
  const fileEdges = new Map();
  const moduleEdges = new Map();
  const add = (graph, from, to) => {
    if (!graph.has(from)) graph.set(from, new Set());
    graph.get(from).add(to);
  };

  for (const file of tsFiles(root)) {
    fileEdges.set(file, new Set());
    for (const { spec, target } of importsOf(file)) {
      if (!target.startsWith(root + sep)) continue;
      add(fileEdges, file, target);
      const where = `src/${rel(file)} imports ${spec}`;
      const [from, to] = [layerOf(file), layerOf(target)];
      if (RANKS.indexOf(to) > RANKS.indexOf(from)) {
        problems.push(`${where}: ${from} imports nothing from ${to} (layers: ${RANKS.join(' <- ')})`);
      }
      const [fromModule, toModule] = [moduleOf(file), moduleOf(target)];
      if (toModule === null) continue;
      if (fromModule === toModule) {
        checkLayer(modules, file, target, spec, problems);
        continue;
      }
      if (relative(join(modules, toModule), target) !== 'index.ts') {
        problems.push(`${where}: reach the module ${toModule} through src/modules/${toModule}/index.ts only`);
      }
      if (fromModule !== null) add(moduleEdges, fromModule, toModule);
    }
  }
  for (const { circle } of circles(moduleEdges)) problems.push(`modules in a circle: ${circle.join(' -> ')}`);
  for (const { circle, group } of circles(fileEdges)) {
    const others = group.filter((f) => !circle.includes(f)).map((f) => `src/${rel(f)}`);
    const tangle = others.length > 0 ? `; in the same tangle: ${others.join(', ')}` : '';
    const path = circle.map((f) => `src/${rel(f)}`).join(' -> ');
    problems.push(`files in a circle (type-only imports count): ${path}${tangle}`);
  }
  return { problems, moduleEdges };
}

function checkLayer(modules, file, target, spec, problems) {
  const parts = (p) => relative(modules, p).split(sep);
  const folderOf = (p) => (parts(p).length > 2 ? parts(p)[1] : null);
  const layers = LAYERS[parts(file)[0]];
  const [from, to] = [folderOf(file), folderOf(target)];
  if (!layers || from === null || from === to) return;
  const rank = (folder) => layers.findIndex((line) => line.includes(folder));
  const where = `src/modules/${parts(file).join('/')} imports ${spec}`;
  const unknown = (folder) => `folder ${folder} is in no layer of LAYERS (scripts/check-module-imports.mjs)`;
  if (rank(from) < 0) problems.push(`src/modules/${parts(file).join('/')}: ${unknown(from)}`);
  else if (to === null) problems.push(`${where}: a layer never imports the module's root files (its wiring)`);
  else if (rank(to) < 0) problems.push(`${where}: ${unknown(to)}`);
  else if (rank(to) > rank(from)) problems.push(`${where}: ${from} may not import the later layer ${to}`);
  else if (rank(to) === rank(from)) problems.push(`${where}: ${from} and ${to} are siblings: no import between them`);
}

/**
 * One circle per group of nodes that reach each other (Tarjan's strongly connected components), the shortest
 * through the group's first node, with the group: a tangle of many files is one line to read, not one per path.
 */
function circles(graph) {
  const index = new Map();
  const low = new Map();
  const stack = [];
  const groups = [];
  const visit = (v) => {
    index.set(v, index.size);
    low.set(v, index.get(v));
    stack.push(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v), low.get(w)));
      } else if (stack.includes(w)) low.set(v, Math.min(low.get(v), index.get(w)));
    }
    if (low.get(v) !== index.get(v)) return;
    const group = [];
    for (let w = stack.pop(); ; w = stack.pop()) {
      group.push(w);
      if (w === v) break;
    }
    if (group.length > 1 || graph.get(v)?.has(v)) groups.push(group);
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return groups.map((group) => {
    const sorted = [...group].sort();
    return { circle: shortestCircle(graph, new Set(group), sorted[0]), group: sorted };
  });
}

/** The shortest path from `start` back to itself inside `group` (breadth first). */
function shortestCircle(graph, group, start) {
  const previous = new Map();
  const queue = [start];
  while (queue.length > 0) {
    const v = queue.shift();
    for (const w of graph.get(v) ?? []) {
      if (!group.has(w) || previous.has(w)) continue;
      previous.set(w, v);
      if (w === start) {
        const path = [start];
        for (let u = v; u !== start; u = previous.get(u)) path.unshift(u);
        return [start, ...path];
      }
      queue.push(w);
    }
  }
  return [start, start];
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const { problems, moduleEdges } = checkImports(process.argv[2] ?? 'src');
  for (const [m, to] of [...moduleEdges].sort()) console.log(`${m} -> ${[...to].sort().join(', ')}`);
  for (const [m, layers] of Object.entries(LAYERS)) {
    console.log(`${m}: ${layers.map((l) => l.join(' | ')).join(' -> ')} -> root files`);
  }
  if (problems.length > 0) {
    console.error(problems.join('\n'));
    console.error(`${problems.length} broken import rule(s), see scripts/check-module-imports.mjs`);
    process.exit(1);
  }
  console.log(`layers ${RANKS.join(' <- ')} kept; modules reached through index.ts; no circle`);
}
