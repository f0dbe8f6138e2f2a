import { readFile } from 'node:fs/promises';
import type { FastifyBaseLogger } from 'fastify';
import { matchesBlocked, NOTHING_BLOCKED, parseBlockedHosts, type HostBlocklist } from '../lib/host-blocklist.js';

/**
 * BLOCKED_HOSTS_FILE (SPEC §18): read at start-up (an unreadable file stops the start), and again on SIGHUP
 * (server.ts). A file that cannot be read then leaves the list as it was.
 */
export interface BlockedHosts extends HostBlocklist {
  /** reads the file again; the number of names now blocked */
  reload(): Promise<number>;
  size(): number;
}

type Log = Pick<FastifyBaseLogger, 'info' | 'warn' | 'error'>;

/** No file configured: nothing is blocked. */
export const NO_BLOCKED_HOSTS: BlockedHosts = { ...NOTHING_BLOCKED, reload: async () => 0, size: () => 0 };

/** Reads `file` now (throwing when it cannot be read) and returns the list, reloadable. */
export async function loadBlockedHosts(file: string | null, log: Log): Promise<BlockedHosts> {
  if (file === null) return NO_BLOCKED_HOSTS;
  const read = async (): Promise<Set<string>> => {
    const { hosts, problems } = parseBlockedHosts(await readFile(file, 'utf8'));
    for (const p of problems.slice(0, 10)) log.warn({ file, line: p.line, text: p.text }, 'BLOCKED_HOSTS_FILE: this line names no host; ignored');
    log.info({ file, hosts: hosts.size }, 'blocked hosts read');
    return hosts;
  };
  let hosts: Set<string>;
  try {
    hosts = await read();
  } catch (err) {
    throw new Error(`BLOCKED_HOSTS_FILE=${file} cannot be read: ${(err as Error).message}`, { cause: err });
  }
  const reload = async (): Promise<number> => {
    try {
      hosts = await read();
    } catch (err) {
      log.error({ file, err }, 'BLOCKED_HOSTS_FILE cannot be read; the hosts read before stay blocked');
    }
    return hosts.size;
  };
  return {
    isBlocked: (host) => matchesBlocked(hosts, host),
    reload,
    size: () => hosts.size,
  };
}
