/** The dashboard module's public face, for the wiring (app-modules.ts): the module serving /app and its assets. */
export { createDashboardModule } from './dashboard.module.js';
