import { Worker, type WorkerOptions } from 'node:worker_threads';

/**
 * A worker thread that runs a module file of ours (typed and linted like the rest), never source in a string:
 * compiled (`.js`) beside the caller in dist; from the TypeScript sources (vitest, tsx, `npm run dev`, bench)
 * through tsx's loader, which the thread registers for itself (module-thread-boot.mjs, a file of its own too).
 *
 * `from`: the caller's import.meta.url; `name`: the module beside it, without extension ('./x-thread').
 */
export function startModuleThread(from: string, name: string, options: WorkerOptions): Worker {
  if (!from.endsWith('.ts')) return new Worker(new URL(`${name}.js`, from), options);
  const source = new URL(`${name}.ts`, from).href;
  return new Worker(new URL('./module-thread-boot.mjs', import.meta.url), { ...options, argv: [...(options.argv ?? []), source, from] });
}
