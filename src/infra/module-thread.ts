import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { Worker, type WorkerOptions } from 'node:worker_threads';

/**
 * A worker thread that runs a module file of ours (typed and linted like the rest), never source in a string:
 * compiled (`.js`) beside the caller in dist; from the TypeScript sources (vitest, tsx, `npm run dev`, bench)
 * through tsx's loader, which the thread registers for itself.
 *
 * `from`: the caller's import.meta.url; `name`: the module beside it, without extension ('./x-thread').
 */
export function startModuleThread(from: string, name: string, options: WorkerOptions): Worker {
  if (!from.endsWith('.ts')) return new Worker(new URL(`${name}.js`, from), options);
  const source = new URL(`${name}.ts`, from).href;
  const boot = `import(${JSON.stringify(tsxEsmApi(from))}).then(({ tsImport }) => tsImport(${JSON.stringify(source)}, ${JSON.stringify(from)}))`;
  return new Worker(boot, { ...options, eval: true });
}

/** tsx's ESM API entry, by the package's own exports map (require.resolve would give the CommonJS one). */
function tsxEsmApi(from: string): string {
  const require = createRequire(from);
  const manifest = require.resolve('tsx/package.json');
  const entry = (require(manifest) as { exports: Record<string, { import: { default: string } }> }).exports['./esm/api']!.import.default;
  return new URL(entry, pathToFileURL(manifest)).href;
}
