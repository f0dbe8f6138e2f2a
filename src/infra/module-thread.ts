import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Worker, type WorkerOptions } from 'node:worker_threads';
import type * as Esbuild from 'esbuild';

/**
 * A worker thread that runs a module file of ours (typed and linted like the rest), never source in a string:
 * compiled (`.js`) beside the caller in dist; from the TypeScript sources (vitest, tsx, `npm run dev`, bench)
 * as one bundle of the module and the files it imports, built by esbuild (a development dependency, as tsx
 * is) and kept under node_modules/.cache until one of those files changes. Loading the bundle costs a thread
 * about half of what registering tsx's loader in it and transpiling file by file did, and every app of a test
 * run starts two such threads.
 *
 * `from`: the caller's import.meta.url; `name`: the module beside it, without extension ('./x-thread').
 */
export function startModuleThread(from: string, name: string, options: WorkerOptions): Worker {
  if (!from.endsWith('.ts')) return new Worker(new URL(`${name}.js`, from), options);
  return new Worker(bundledFromSources(fileURLToPath(new URL(`${name}.ts`, from))), options);
}

/**
 * Ends a thread that owns a database connection: asks it to close (the message `'close'`), waits until it says
 * so (`{ closed: true }`) or has exited, then terminates it. The writer threads of clicks and of imports, the
 * checkpoint and scan threads of db/ answer so; any other message on the way (a reply, an error report) waits on.
 */
export async function closeModuleThread(worker: Worker): Promise<void> {
  const closed = new Promise<void>((resolve) => {
    worker.once('exit', () => resolve());
    worker.on('message', (m: unknown) => {
      if (typeof m === 'object' && m !== null && 'closed' in m) resolve();
    });
  });
  worker.ref();
  worker.postMessage('close');
  await closed;
  await worker.terminate();
}

const CACHE_DIR = fileURLToPath(new URL('../../node_modules/.cache/ferry-module-threads/', import.meta.url));

/** What a bundle was built from: each input's path, size and modification time. */
type Inputs = Record<string, [size: number, mtimeMs: number]>;

/** The bundle of `source` (a .ts module), built again only when one of its inputs changed. */
function bundledFromSources(source: string): URL {
  const key = `${path.basename(source, '.ts')}-${createHash('sha256').update(source).digest('hex').slice(0, 12)}`;
  const bundle = path.join(CACHE_DIR, `${key}.mjs`);
  const stamp = path.join(CACHE_DIR, `${key}.json`);
  if (!isCurrent(stamp)) build(source, bundle, stamp);
  return pathToFileURL(bundle);
}

function isCurrent(stamp: string): boolean {
  let inputs: Inputs;
  try {
    inputs = JSON.parse(readFileSync(stamp, 'utf8')) as Inputs;
  } catch {
    return false;
  }
  return Object.entries(inputs).every(([file, [size, mtimeMs]]) => {
    try {
      const s = statSync(file);
      return s.size === size && s.mtimeMs === mtimeMs;
    } catch {
      return false;
    }
  });
}

function build(source: string, bundle: string, stamp: string): void {
  // Loaded only here: a compiled build never comes this way, and production installs no esbuild.
  const esbuild = createRequire(import.meta.url)('esbuild') as typeof Esbuild;
  const root = path.dirname(fileURLToPath(new URL('../../package.json', import.meta.url)));
  const result = esbuild.buildSync({
    entryPoints: [source],
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    packages: 'external',
    write: false,
    metafile: true,
    logLevel: 'silent',
    absWorkingDir: root,
  });
  const inputs: Inputs = {};
  for (const file of Object.keys(result.metafile.inputs)) {
    const absolute = path.resolve(root, file);
    const s = statSync(absolute);
    inputs[absolute] = [s.size, s.mtimeMs];
  }
  mkdirSync(CACHE_DIR, { recursive: true });
  // Written aside and renamed: processes that build at once never load a half-written file.
  const unique = `${process.pid}-${Math.random().toString(36).slice(2)}`;
  writeFileSync(`${bundle}.${unique}`, result.outputFiles[0]!.contents);
  renameSync(`${bundle}.${unique}`, bundle);
  writeFileSync(`${stamp}.${unique}`, JSON.stringify(inputs));
  renameSync(`${stamp}.${unique}`, stamp);
}
