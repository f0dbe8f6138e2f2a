import type { FastifyPluginAsync } from 'fastify';
import type { TSchema } from 'typebox';
import type { PeriodicJob } from './infra/job-runner.js';
import type { ApiVersion } from './plugins/versioning.js';

/**
 * What a module gives app.ts to be wired in (each module's `*.module.ts`, through its index.ts): app.ts adds
 * the schemas, registers the routes once per API version, schedules the jobs and runs `close` when the app
 * closes; it knows nothing else of the module but the services other modules are built with.
 */
export interface AppModule {
  /** TypeBox schemas with an $id: validation, and components of the OpenAPI document */
  schemas: readonly TSchema[];
  /** its JSON routes, registered inside each /api/v{n} context */
  apiRoutes?: FastifyPluginAsync<{ basePath: string; version: ApiVersion }>;
  /**
   * its routes outside the API, in the root context (health, the dashboard, the domains' proofs, the redirect):
   * registered after the API, in module order, each with only the hooks it adds itself
   */
  rootRoutes?: FastifyPluginAsync;
  /**
   * its background jobs (infra/job-runner.ts: once per period among the instances, one run at a time, errors
   * logged; `perInstance` for a job whose work is the process's own)
   */
  jobs?: readonly PeriodicJob[];
  /** after in-flight requests and the jobs have stopped, before the database closes; in reverse module order */
  close?: () => Promise<void>;
}

/** A module's factory result, checked against AppModule and keeping its own services (`users`, `tokens`, …). */
export const appModule = <M extends AppModule>(module: M): M => module;
