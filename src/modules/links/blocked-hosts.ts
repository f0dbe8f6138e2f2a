import { readFile } from 'node:fs/promises';
import { isIP } from 'node:net';
import type { FastifyBaseLogger } from 'fastify';

declare module 'fastify' {
  interface FastifyInstance {
    /** Reads BLOCKED_HOSTS_FILE again (server.ts, on SIGHUP); the number of names now blocked. */
    reloadBlockedHosts(): Promise<number>;
  }
}

/**
 * BLOCKED_HOSTS_FILE (SPEC §18): host names that links may not point at, one a line; a name blocks itself and
 * every subdomain (`evil.example` blocks `www.evil.example`); `#` starts a comment. The file is read at
 * start-up (an unreadable file stops the start) and again on SIGHUP (server.ts), when a file that cannot be
 * read leaves the list as it was.
 */
export interface BlockedHosts {
  /** whether a link to this host (as the URL parser writes it) is refused */
  isBlocked(host: string): boolean;
  /** reads the file again; the number of names now blocked */
  reload(): Promise<number>;
  size(): number;
}

export interface ParsedHosts {
  hosts: Set<string>;
  /** lines that name no host, with their line number (1-based) */
  problems: Array<{ line: number; text: string }>;
}

/** A blocklist name as the URL parser would write the host: lower case, punycode, no trailing dot, `*.` dropped. */
function canonicalHost(name: string): string | null {
  const bare = name.replace(/^\*\./, '').replace(/\.+$/, '');
  if (bare === '' || /[/?#@:\s]/.test(bare.replace(/^\[.*\]$/, ''))) return null;
  try {
    return new URL(`http://${bare}/`).hostname.replace(/^\[(.*)\]$/, '$1');
  } catch {
    return null;
  }
}

export function parseBlockedHosts(text: string): ParsedHosts {
  const hosts = new Set<string>();
  const problems: ParsedHosts['problems'] = [];
  text.split(/\r?\n/).forEach((raw, i) => {
    const name = raw.replace(/#.*/, '').trim();
    if (name === '') return;
    const host = canonicalHost(name);
    if (host === null) problems.push({ line: i + 1, text: name.slice(0, 100) });
    else hosts.add(host);
  });
  return { hosts, problems };
}

/** Whether `host` or one of its parent domains is in the set; an IP address only matches itself. */
export function matchesBlocked(hosts: ReadonlySet<string>, host: string): boolean {
  if (hosts.size === 0) return false;
  let h = host.toLowerCase().replace(/^\[(.*)\]$/, '$1').replace(/\.+$/, '');
  if (isIP(h) !== 0) return hosts.has(h);
  if (hosts.has(h)) return true;
  // Its parent domains; a listed address is no parent of anything.
  for (let dot = h.indexOf('.'); dot !== -1; dot = h.indexOf('.')) {
    h = h.slice(dot + 1);
    if (hosts.has(h) && isIP(h) === 0) return true;
  }
  return false;
}

/** No file configured: nothing is blocked. */
export const NO_BLOCKED_HOSTS: BlockedHosts = { isBlocked: () => false, reload: async () => 0, size: () => 0 };

/** Reads `file` now (throwing when it cannot be read) and returns the list, reloadable. */
export async function loadBlockedHosts(file: string | null, log: Pick<FastifyBaseLogger, 'info' | 'warn' | 'error'>): Promise<BlockedHosts> {
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
  return {
    isBlocked: (host) => matchesBlocked(hosts, host),
    async reload() {
      try {
        hosts = await read();
      } catch (err) {
        log.error({ file, err }, 'BLOCKED_HOSTS_FILE cannot be read; the hosts read before stay blocked');
      }
      return hosts.size;
    },
    size: () => hosts.size,
  };
}
