/** The orders module's public face, for the wiring (app-modules.ts). */
export { createOrdersModule } from './orders.module.js';
