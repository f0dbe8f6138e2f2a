/**
 * The redirect module's public face: the visit (SPEC §6, §13, §19). It owns the redirect routes and their fast
 * path, the link cache and the visit policy; it reads links through its own queries and depends on links (the
 * reserved codes), domains (the directory), clicks (the click event and sink) and users (the hasher) through
 * their index.ts. Nothing depends on it but the wiring: links drops changed names through its VisitCache port.
 */
export { createRedirectModule, type RedirectModule, type RedirectModuleDeps } from './redirect.module.js';
