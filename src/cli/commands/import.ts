import { createReadStream } from 'node:fs';
import { Argument, Option } from 'commander';
import {
  SOURCE_NAMES,
  type ImportRequest,
  type ImportsService,
  type RunEnd,
  type SourceName,
  jobProgress,
} from '../../modules/imports/index.js';
import type { ImportJobRow } from '../../db/types.js';
import type { Output } from '../output.js';
import { CliError, EXIT, usageError } from '../cli-error.js';
import type { CommandContext, CommandModule } from '../command.js';

interface ImportOptions {
  url?: string;
  apiKey?: string;
  file?: string;
  database?: string;
  tablePrefix?: string;
  owner?: string;
  dryRun?: boolean;
  onConflict: 'skip' | 'fail';
  domainMap: string[];
}

/** `--domain-map FROM=TO`, repeated. */
function domainMapOf(pairs: readonly string[]): Record<string, string> {
  const map: Record<string, string> = {};
  for (const pair of pairs) {
    const m = /^([^=\s]+)=([^=\s]+)$/.exec(pair);
    if (!m) throw usageError(`--domain-map takes FROM=TO, not ${JSON.stringify(pair)}`);
    map[m[1]!.toLowerCase()] = m[2]!.toLowerCase();
  }
  return map;
}

/** The import's request from the command's arguments. */
function requestOf(source: SourceName, opts: ImportOptions): ImportRequest {
  return {
    source,
    url: opts.url,
    apiKey: opts.apiKey,
    database: opts.database,
    tablePrefix: opts.tablePrefix,
    owner: opts.owner,
    dryRun: opts.dryRun,
    onConflict: opts.onConflict,
    domainMap: domainMapOf(opts.domainMap),
    csv: opts.file !== undefined ? createReadStream(opts.file) : undefined,
  };
}

/** Runs the import to its end, or to the first Ctrl-C; reports it, and exits non-zero unless every item came over. */
async function runImport(
  { out, services, onInterrupt }: CommandContext,
  source: SourceName,
  opts: ImportOptions,
): Promise<void> {
  const request = requestOf(source, opts);
  const stop = new AbortController();
  // The first Ctrl-C stops after the batch being written (its transaction commits or never began); a
  // second one ends the process at once, which loses nothing committed either.
  const onInterrupted = () => {
    stop.abort();
    out.warn(
      'interrupted: stopping after the batch being written (Ctrl-C again to stop at once); run the same command again to finish the rest',
    );
  };
  const stopListening = onInterrupt(onInterrupted);
  const bar = out.progress(`import ${source}`, 0, 'items');
  try {
    const { imports } = await services();
    const { end, job, owner } = await imports.run(request, {
      signal: stop.signal,
      onProgress: (c) => {
        bar.setTotal(c.items);
        bar.update(c.items);
      },
    });
    bar.stop();
    const counts = await report(out, imports, { end, job, owner, dryRun: Boolean(opts.dryRun) });
    if (end.state === 'failed') throw new CliError(`the import failed: ${end.error}`, EXIT.failed);
    if (end.state === 'interrupted' || end.state === 'cancelled')
      throw new CliError(`the import was ${end.state}`, EXIT.failed);
    // The others are in; the failed ones are listed above, and a run after fixing them brings only them.
    if (counts.failed > 0) throw new CliError(`${counts.failed} of ${counts.items} items failed`, EXIT.failed);
  } finally {
    bar.stop();
    stopListening();
  }
}

/**
 * `ferry import <source>` (SPEC §20): the same import as the admin endpoint, run in this process against the
 * configured database, with a progress bar at a terminal. Ctrl-C stops it between two batches; running the
 * same command again finishes the rest.
 */
export const importCommand: CommandModule = (program, cli) => {
  program
    .command('import')
    .description('bring links (and their visits) from Shlink, Kutt, YOURLS, Bitly, Dub or a CSV file')
    .addArgument(new Argument('<source>', 'where the links come from').choices(SOURCE_NAMES))
    .option('--url <url>', 'the API of Shlink, Kutt or Bitly (Bitly: https://api-ssl.bitly.com/v4/groups/<group_guid>)')
    .option('--api-key <key>', 'the API key (Shlink, Kutt) or bearer token (Bitly)')
    .option('--file <path>', 'a CSV file (csv, dub, bitly)')
    .option('--database <url>', 'YOURLS: mysql://user:password@host:port/database')
    .option('--table-prefix <prefix>', "YOURLS's table prefix", 'yourls_')
    .option('--owner <username>', 'who owns the imported links (default: the oldest active admin)')
    .option('--dry-run', 'report what would happen; change nothing')
    .addOption(
      new Option('--on-conflict <policy>', 'a code taken in Ferry: skip the item or stop')
        .choices(['skip', 'fail'])
        .default('skip'),
    )
    .option('--domain-map <FROM=TO...>', "map a source domain to a Ferry domain ('default' for a default domain)", [])
    .action(cli.action(runImport));
};

/** What the import came to: its counts, then each item that was not simply created, saying why. */
async function report(
  out: Output,
  imports: ImportsService,
  r: { end: RunEnd; job: ImportJobRow; owner: { username: string }; dryRun: boolean },
) {
  const { end, job, owner, dryRun } = r;
  const counts = jobProgress(job);
  // Conflicts and failures, items that came over without something (a password, validSince), and items imported
  // before that got new visits: each says what (the job resource's list).
  const problems = (await imports.get(job.id)).items.map((i) => ({ ...i, visits: Number(i.visits) }));
  const what = (p: (typeof problems)[number]) => p.message ?? (p.visits > 0 ? `${p.visits} new visits` : '');
  out.result({ job: job.id, state: end.state, owner: owner.username, dry_run: dryRun, ...counts, problems }, [
    `import ${job.id} ${end.state}${dryRun ? ' (dry run: nothing written)' : ''}: ${counts.items} items, ${counts.created} ${dryRun ? 'would be created' : 'created'}, ` +
      `${counts.unchanged} unchanged, ${counts.conflicts} conflicts, ${counts.failed} failed, ${counts.visits} visits` +
      `${counts.visits_skipped ? ` (${counts.visits_skipped} skipped: no date within 1970-9999)` : ''}; owner ${owner.username}`,
    ...problems.map(
      (p) =>
        `  ${p.outcome} ${p.source_ref}${p.short_code && !p.source_ref.endsWith(`/${p.short_code}`) ? ` (as ${p.short_code})` : ''}: ${what(p)}`,
    ),
    ...(end.state === 'interrupted' ? ['interrupted: run the same command again to finish the rest'] : []),
  ]);
  return counts;
}
