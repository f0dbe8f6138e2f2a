// The entry of a worker thread started from the TypeScript sources (module-thread.ts): runs the module file
// named by its argv through tsx's loader, registered for this thread only. Compiled builds never load it.
import process from 'node:process';
import { tsImport } from 'tsx/esm/api';

const [source, parent] = process.argv.slice(-2);
await tsImport(source, parent);
