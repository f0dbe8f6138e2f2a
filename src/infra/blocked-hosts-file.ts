import { watch, type FSWatcher, type Stats } from 'node:fs';
import { open, stat } from 'node:fs/promises';
import path from 'node:path';
import type { FastifyBaseLogger } from 'fastify';
import { matchesBlocked, NOTHING_BLOCKED, parseBlockedHosts, type HostBlocklist } from '../lib/host-blocklist.js';

/**
 * BLOCKED_HOSTS_FILE (SPEC §18): read at start-up (an unreadable file stops the start), and again on SIGHUP
 * (server.ts) or when the file changes (watch()). A file that cannot be read then leaves the list as it was.
 */
export interface BlockedHosts extends HostBlocklist {
  /** reads the file again (`by`: what asked, for the log line); the number of names now blocked */
  reload(by?: ReloadCause): Promise<number>;
  size(): number;
  /** reads the file again whenever it changes, until close() */
  watch(): void;
  close(): void;
}

type Log = Pick<FastifyBaseLogger, 'info' | 'warn' | 'error'>;

/** What made the list be read, as its log lines say (`by`). */
export type ReloadCause = 'start' | 'SIGHUP' | 'change';

/** A burst of events (an editor's truncate, write, rename) is one reload, this long after its last event. */
export const WATCH_DEBOUNCE_MS = 200;

/** No file configured: nothing is blocked. */
export const NO_BLOCKED_HOSTS: BlockedHosts = {
  ...NOTHING_BLOCKED,
  reload: async () => 0,
  size: () => 0,
  watch: () => undefined,
  close: () => undefined,
};

/** What tells one version of the file from another without reading it again. */
const versionOf = (s: Stats): string => `${s.dev}:${s.ino}:${s.size}:${s.mtimeMs}:${s.ctimeMs}`;
const missing = (err: unknown): string => `missing:${(err as NodeJS.ErrnoException).code ?? ''}`;

/** The file's version now (following a symbolic link, as a read does). */
async function currentVersion(file: string): Promise<string> {
  try {
    return versionOf(await stat(file));
  } catch (err) {
    return missing(err);
  }
}

/** The file's text and the version it was read at (the inode read: a rename meanwhile cannot mix two versions). */
async function readVersioned(file: string): Promise<{ text: string; version: string }> {
  const handle = await open(file, 'r');
  try {
    const version = versionOf(await handle.stat());
    return { text: await handle.readFile('utf8'), version };
  } finally {
    await handle.close();
  }
}

/**
 * Watches the file's directory, not the file: an editor that saves by writing a new file and renaming it over
 * the old one leaves a watch of the file on the old, deleted inode, and a Kubernetes ConfigMap swaps a
 * symbolic link beside it. A burst of events there is one check, WATCH_DEBOUNCE_MS after its last event, and
 * the check reloads when the file is not the version read last (`changed`). Returns the watch's close.
 */
function watchFile(file: string, changed: () => Promise<void>, log: Log): () => void {
  let timer: NodeJS.Timeout | null = null;
  let checking: Promise<void> = Promise.resolve();
  let watcher: FSWatcher;
  try {
    watcher = watch(path.dirname(file), { persistent: false }, () => {
      if (timer) clearTimeout(timer);
      timer = setTimeout(() => {
        timer = null;
        checking = checking.then(changed);
      }, WATCH_DEBOUNCE_MS).unref();
    });
  } catch (err) {
    log.warn({ file, err }, 'BLOCKED_HOSTS_FILE cannot be watched; send SIGHUP to read it again after a change');
    return () => undefined;
  }
  watcher.on('error', (err) => {
    log.warn({ file, err }, 'BLOCKED_HOSTS_FILE is no longer watched; send SIGHUP to read it again after a change');
    watcher.close();
  });
  return () => {
    if (timer) clearTimeout(timer);
    watcher.close();
  };
}

/** Reads `file` now (throwing when it cannot be read) and returns the list, reloadable and watchable. */
export async function loadBlockedHosts(file: string | null, log: Log): Promise<BlockedHosts> {
  if (file === null) return NO_BLOCKED_HOSTS;
  /** the version of the file last read, or of the failure to read it */
  let version = '';
  const read = async (by: ReloadCause): Promise<Set<string>> => {
    let text: string;
    try {
      ({ text, version } = await readVersioned(file));
    } catch (err) {
      version = missing(err);
      throw err;
    }
    const { hosts, problems } = parseBlockedHosts(text);
    for (const p of problems.slice(0, 10)) {
      log.warn({ file, line: p.line, text: p.text }, 'BLOCKED_HOSTS_FILE: this line names no host; ignored');
    }
    log.info({ file, hosts: hosts.size, by }, 'blocked hosts read');
    return hosts;
  };
  let hosts: Set<string>;
  try {
    hosts = await read('start');
  } catch (err) {
    throw new Error(`BLOCKED_HOSTS_FILE=${file} cannot be read: ${(err as Error).message}`, { cause: err });
  }
  let unwatch: (() => void) | null = null;
  const reload = async (by: ReloadCause = 'SIGHUP'): Promise<number> => {
    try {
      hosts = await read(by);
    } catch (err) {
      log.error({ file, err, by }, 'BLOCKED_HOSTS_FILE cannot be read; the hosts read before stay blocked');
    }
    return hosts.size;
  };
  const changed = async (): Promise<void> => {
    if (unwatch !== null && (await currentVersion(file)) !== version) await reload('change');
  };
  return {
    isBlocked: (host) => matchesBlocked(hosts, host),
    reload,
    size: () => hosts.size,
    watch() {
      unwatch ??= watchFile(file, changed, log);
    },
    close() {
      unwatch?.();
      unwatch = null;
    },
  };
}
