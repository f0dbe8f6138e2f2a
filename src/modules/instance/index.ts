/** The instance module's public face: app.ts builds it and logs the first-run hint it gives. */
export { createInstanceModule } from './instance.module.js';
