import { existsSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** What `vite build` (web/vite.config.ts) writes: index.html beside the hashed files of assets/. */
export interface WebAssets {
  root: string;
  assets: string;
}

/**
 * The built dashboard of this package: `dist/web` under the nearest directory holding package.json. The same
 * answer whether this file runs from src/ (tsx, tests) or from dist/src/ (npm start).
 */
export function defaultWebDir(from: string = fileURLToPath(import.meta.url)): string {
  let dir = path.dirname(from);
  while (!existsSync(path.join(dir, 'package.json'))) {
    const parent = path.dirname(dir);
    if (parent === dir) return path.resolve('dist/web');
    dir = parent;
  }
  return path.join(dir, 'dist', 'web');
}

/** The built dashboard in `dir`, or null when it was not built there (no index.html or no assets/). */
export function findWebAssets(dir: string): WebAssets | null {
  const root = path.resolve(dir);
  const assets = path.join(root, 'assets');
  const isFile = (p: string) => existsSync(p) && statSync(p).isFile();
  const isDir = (p: string) => existsSync(p) && statSync(p).isDirectory();
  return isFile(path.join(root, 'index.html')) && isDir(assets) ? { root, assets } : null;
}
