import { chromiumMissing } from './browser.js';

/**
 * Why a suite that needs something this machine may lack cannot run, or null when it can. A suite that skips
 * carries the reason in its name (`unless`), and test/helpers/skip-reporter.ts prints one line per test file
 * that skipped anything, with that reason, so a run never skips silently.
 */
export const missing = {
  postgres: process.env.TEST_DATABASE_URL ? null : 'TEST_DATABASE_URL is not set',
  redis: process.env.TEST_REDIS_URL ? null : 'TEST_REDIS_URL is not set',
  /** SPEC §22's message bus: a NATS server, a RabbitMQ broker (.ci/run starts both) */
  nats: process.env.TEST_NATS_URL ? null : 'TEST_NATS_URL is not set (NATS is not running)',
  amqp: process.env.TEST_AMQP_URL ? null : 'TEST_AMQP_URL is not set (RabbitMQ is not running)',
  /** a MariaDB or MySQL server for the YOURLS importer's tests */
  mysql: process.env.TEST_MYSQL_URL ? null : 'TEST_MYSQL_URL is not set (MariaDB is not running)',
  /** the scale-out configuration: PostgreSQL and Redis both */
  scaleOut:
    process.env.TEST_DATABASE_URL && process.env.TEST_REDIS_URL
      ? null
      : `${[!process.env.TEST_DATABASE_URL && 'TEST_DATABASE_URL', !process.env.TEST_REDIS_URL && 'TEST_REDIS_URL'].filter(Boolean).join(' and ')} not set`,
  chromium: chromiumMissing(),
  linux: process.platform === 'linux' ? null : `reads /proc, and this is ${process.platform}`,
} as const;

/** The marker the reporter looks for in a skipped test's or suite's name. */
export const SKIP_MARK = ' [skipped here: ';

/** A suite's or test's name, with the reason it is skipped appended when there is one. */
export const unless = (reason: string | null, name: string): string =>
  reason === null ? name : `${name}${SKIP_MARK}${reason}]`;
