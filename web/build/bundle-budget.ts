import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import type { Logger, Plugin } from 'vite';

/**
 * The dashboard's size budget: the JavaScript of the first load, gzipped as it is served, must
 * stay under a limit. The build prints the sizes and fails past it. "First load" is the entry chunk and
 * every chunk it imports statically, transitively: what the browser fetches before the first screen;
 * chunks loaded by import() (the analytics screen with its chart) are listed apart.
 *
 * The same pass writes .gz and .br beside each compressible asset, which @fastify/static serves
 * (preCompressed) to clients that accept them: the sizes printed are what goes over the wire.
 */
export const FIRST_LOAD_BUDGET_BYTES = 150_000;

/** The part of Rollup's/Rolldown's output bundle this needs. */
export interface OutputFile {
  type: 'chunk' | 'asset';
  fileName: string;
  isEntry?: boolean;
  imports?: string[];
  code?: string;
  source?: string | Uint8Array;
}

export interface ScriptSize {
  file: string;
  gzipBytes: number;
  firstLoad: boolean;
}

/** The entry chunks and, transitively, what they import statically. */
export function firstLoadChunks(bundle: Record<string, OutputFile>): Set<string> {
  const seen = new Set<string>();
  const visit = (name: string) => {
    const chunk = bundle[name];
    if (!chunk || chunk.type !== 'chunk' || seen.has(name)) return;
    seen.add(name);
    for (const imported of chunk.imports ?? []) visit(imported);
  };
  for (const f of Object.values(bundle)) if (f.type === 'chunk' && f.isEntry) visit(f.fileName);
  return seen;
}

const gzip = (data: Uint8Array): Buffer => gzipSync(data, { level: 9 });
const brotli = (data: Uint8Array): Buffer => brotliCompressSync(data, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } });
const contents = (f: OutputFile): Uint8Array => Buffer.from(f.type === 'chunk' ? (f.code ?? '') : (f.source ?? ''));

export function scriptSizes(bundle: Record<string, OutputFile>): ScriptSize[] {
  const first = firstLoadChunks(bundle);
  return Object.values(bundle)
    .filter((f) => f.type === 'chunk')
    .map((f) => ({ file: f.fileName, gzipBytes: gzip(contents(f)).length, firstLoad: first.has(f.fileName) }))
    .sort((a, b) => Number(b.firstLoad) - Number(a.firstLoad) || b.gzipBytes - a.gzipBytes);
}

const kB = (bytes: number): string => `${(bytes / 1000).toFixed(1)} kB`;

/** The report the build prints, and whether the first load is within the budget. */
export function budgetReport(sizes: ScriptSize[], budgetBytes: number): { ok: boolean; lines: string[] } {
  const firstLoad = sizes.filter((s) => s.firstLoad).reduce((sum, s) => sum + s.gzipBytes, 0);
  const lazy = sizes.filter((s) => !s.firstLoad);
  const ok = firstLoad <= budgetBytes;
  const lines = [
    `bundle budget: first load ${kB(firstLoad)} of gzipped JavaScript, budget ${kB(budgetBytes)}: ${ok ? 'within' : 'OVER'}`,
    ...sizes.filter((s) => s.firstLoad).map((s) => `  first load  ${kB(s.gzipBytes).padStart(9)}  ${s.file}`),
    ...lazy.map((s) => `  on demand   ${kB(s.gzipBytes).padStart(9)}  ${s.file}`),
  ];
  return { ok, lines };
}

const COMPRESSIBLE = /\.(js|css|svg|json|txt|html|map)$/;

/** Writes file.gz and file.br beside each compressible asset when they are smaller than the file. */
function writeCompressed(outDir: string, bundle: Record<string, OutputFile>): void {
  for (const f of Object.values(bundle)) {
    if (!COMPRESSIBLE.test(f.fileName) || f.fileName.endsWith('.html')) continue;
    const data = contents(f);
    const file = path.join(outDir, f.fileName);
    for (const [ext, compress] of [['.gz', gzip], ['.br', brotli]] as const) {
      const packed = compress(data);
      if (packed.length < data.length) writeFileSync(file + ext, packed);
    }
  }
}

export function bundleBudget(budgetBytes: number = FIRST_LOAD_BUDGET_BYTES): Plugin {
  let logger: Logger | undefined;
  return {
    name: 'ferry-bundle-budget',
    apply: 'build',
    configResolved(config) {
      logger = config.logger;
    },
    writeBundle(options, bundle) {
      const outDir = options.dir ?? path.dirname(options.file ?? '.');
      writeCompressed(outDir, bundle as unknown as Record<string, OutputFile>);
      const report = budgetReport(scriptSizes(bundle as unknown as Record<string, OutputFile>), budgetBytes);
      for (const line of report.lines) logger?.info(line);
      if (!report.ok) this.error(`the first load's JavaScript is over the budget of ${kB(budgetBytes)} gzipped (see the sizes above)`);
    },
  };
}
