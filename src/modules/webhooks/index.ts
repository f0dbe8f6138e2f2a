/**
 * The webhooks module's public face (SPEC §22): built by app-modules.ts; the dispatcher is the app's to nudge
 * (tests) and stop; nothing else of it crosses its border.
 */
export { createWebhooksModule, type WebhooksModule, type WebhooksModuleDeps } from './webhooks.module.js';
export type { Dispatcher } from './webhook-dispatcher.js';
