import cliProgress from 'cli-progress';
import type { CliError } from './cli-error.js';

/**
 * A stream `ferry` writes to; the terminal's properties (isTTY, columns, hasColors) only when it is one, as on
 * process.stdout.
 */
export type OutputStream = Pick<NodeJS.WriteStream, 'write'> &
  Partial<Pick<NodeJS.WriteStream, 'isTTY' | 'columns' | 'hasColors'>>;

/** Where `ferry` writes: the process's stdout and stderr (the CLI's only writer; src/ has no console.*). */
export interface OutputStreams {
  stdout: OutputStream;
  stderr: OutputStream;
}

/** A progress display; a no-op where none is shown. */
export interface Progress {
  /** moves to `value` of the total */
  update(value: number): void;
  /** a new total (work found to be larger or smaller than announced) */
  setTotal(total: number): void;
  stop(): void;
}

/**
 * What a command prints. People get lines of text on stdout; scripts (`--json`) get one JSON document on
 * stdout per command and nothing else there. Warnings and errors go to stderr in both modes (errors as JSON
 * with --json). A progress bar is drawn on stderr only for a person at a terminal: not with --json, and not
 * when stdout is not a terminal (a pipe, a file, a test).
 */
export interface Output {
  readonly json: boolean;
  /** The command's result: `value` as JSON with --json, otherwise `human` (lines). */
  result(value: unknown, human: string | readonly string[]): void;
  /** A line for people that is not the result (what is being done); nothing with --json. */
  info(line: string): void;
  /** A warning for people and scripts alike (stderr). */
  warn(line: string): void;
  error(err: CliError): void;
  /** A question at the terminal (stderr, so that it never mixes with a result). */
  prompt(text: string): void;
  progress(label: string, total: number, unit: 'bytes' | 'items'): Progress;
}

const NO_PROGRESS: Progress = { update: () => undefined, setTotal: () => undefined, stop: () => undefined };

const mebibytes = (n: number): string => (n / 1048576).toFixed(1);

export function createOutput(streams: OutputStreams, json: boolean): Output {
  const { stdout, stderr } = streams;
  const lines = (text: string | readonly string[]): string =>
    (typeof text === 'string' ? [text] : text).map((l) => `${l}\n`).join('');
  return {
    json,
    result(value, human) {
      stdout.write(json ? `${JSON.stringify(value, null, 2)}\n` : lines(human));
    },
    info(line) {
      if (!json) stdout.write(`${line}\n`);
    },
    warn(line) {
      stderr.write(json ? `${JSON.stringify({ warning: line })}\n` : `warning: ${line}\n`);
    },
    error(err) {
      if (json) {
        stderr.write(`${JSON.stringify({ error: { code: err.code, message: err.message, details: err.details } })}\n`);
        return;
      }
      stderr.write(`ferry: ${err.message}\n`);
      for (const d of err.details) stderr.write(`  ${d.field}: ${d.message}\n`);
    },
    prompt(text) {
      stderr.write(text);
    },
    progress(label, total, unit) {
      if (json || !stdout.isTTY || !stderr.isTTY) return NO_PROGRESS;
      const format =
        unit === 'bytes'
          ? `${label} [{bar}] {percentage}% {done}/{all} MiB`
          : `${label} [{bar}] {percentage}% {value}/{total}`;
      const bar = new cliProgress.SingleBar(
        { format, stream: stderr as NodeJS.WritableStream, hideCursor: true, clearOnComplete: false },
        cliProgress.Presets.shades_classic,
      );
      const extra = (value: number, all: number) =>
        unit === 'bytes' ? { done: mebibytes(value), all: mebibytes(all) } : {};
      let max = total;
      bar.start(max, 0, extra(0, max));
      return {
        update: (value) => bar.update(value, extra(value, max)),
        setTotal: (t) => {
          max = t;
          bar.setTotal(t);
        },
        stop: () => bar.stop(),
      };
    },
  };
}

/** Rows as aligned columns under a header, for people. */
export function table(header: readonly string[], rows: ReadonlyArray<readonly string[]>): string[] {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]) =>
    cells.map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i]!))).join('  ');
  return [line(header), ...rows.map(line)];
}
