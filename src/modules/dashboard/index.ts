/** The dashboard module's public face, for app.ts: its routes and where its built assets are found. */
export { dashboardRoutes } from './dashboard.routes.js';
export { defaultWebDir, findWebAssets } from './web-assets.js';
