import { readdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildSync } from 'esbuild';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** Every TypeScript file under src/, as paths relative to the root. */
function sourceFiles(dir = 'src'): string[] {
  return readdirSync(path.join(root, dir), { withFileTypes: true }).flatMap((e) => {
    const rel = path.join(dir, e.name);
    if (e.isDirectory()) return sourceFiles(rel);
    return e.name.endsWith('.ts') && !e.name.endsWith('.d.ts') ? [rel] : [];
  });
}

/**
 * src/ turned into JavaScript file by file, as `npm run build` lays it out (`<dir>/src/server.js`), by esbuild,
 * which is what tsx runs on each file too. A process the tests start (the server, the worker, the `ferry` CLI)
 * then loads plain JavaScript: starting one through tsx's loader cost 2.8–3.3 s of CPU, compiled about 1 s.
 * Built from the sources at the start of every run (and every rerun in
 * watch mode), so a test never runs stale code; kept under test-results/ (ignored by git and the linter),
 * inside the project so that node_modules and package.json ("type": "module") are found as from src/.
 */
export function compileSources(): { dir: string; rebuild: () => void; remove: () => void } {
  const dir = path.join(root, 'test-results', 'compiled', `${process.pid}-${Date.now().toString(36)}`);
  const rebuild = () => {
    rmSync(dir, { recursive: true, force: true });
    buildSync({
      entryPoints: sourceFiles(),
      outdir: path.join(dir, 'src'),
      outbase: 'src',
      absWorkingDir: root,
      bundle: false,
      platform: 'node',
      format: 'esm',
      target: 'node20',
      logLevel: 'silent',
    });
  };
  rebuild();
  return { dir, rebuild, remove: () => rmSync(dir, { recursive: true, force: true }) };
}
