/**
 * The audit module's public face, for the wiring (app-core-modules.ts). Writing an entry is db/audit-log.ts's
 * `recordAudit`, which every module and the CLI call in their own transactions.
 */
export { createAuditModule } from './audit.module.js';
