import { fileURLToPath } from 'node:url';
import preact from '@preact/preset-vite';
import { defineConfig } from 'vite';
import { bundleBudget } from './build/bundle-budget.js';

/**
 * The dashboard's build (SPEC §16): `vite build -c web/vite.config.ts` writes dist/web, which the server
 * serves at /app (src/modules/dashboard). `npm run web:dev` serves it with hot reload and sends /api to a
 * Ferry running on FERRY_URL (default http://127.0.0.1:3000).
 */
export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: '/app/',
  // Devtools and hot reload are development aids only; nothing of them ships.
  plugins: [preact({ devToolsEnabled: false }), bundleBudget()],
  build: {
    outDir: fileURLToPath(new URL('../dist/web', import.meta.url)),
    emptyOutDir: true,
    target: 'es2022',
    // Browsers that run ES2022 support modulepreload; the polyfill would only add bytes.
    modulePreload: { polyfill: false },
    // Vite's own per-file gzip report duplicates the budget's, which measures what is served.
    reportCompressedSize: false,
  },
  server: {
    proxy: { '/api': process.env.FERRY_URL ?? 'http://127.0.0.1:3000' },
  },
});
