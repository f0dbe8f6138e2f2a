/** Process entry of the `ferry` command-line tool (package.json `bin`, through bin/ferry.mjs). */
import { runCli } from './program.js';

// `ferry … | head`: when the reader has gone, what is left to print has nowhere to go. The command still ends
// as it would have (its work done, its exit status), rather than dying of the write's EPIPE with a stack trace.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code !== 'EPIPE') throw err;
  });
}

const status = await runCli({
  argv: process.argv.slice(2),
  env: process.env,
  stdout: process.stdout,
  stderr: process.stderr,
  stdin: process.stdin,
  // Heard once: a second Ctrl-C meets no listener and ends the process as SIGINT does by default.
  onInterrupt: (listener) => {
    process.once('SIGINT', listener);
    return () => process.off('SIGINT', listener);
  },
});
// A pipe's writes are asynchronous: exiting before they drain cut `ferry import --json | …` short.
await Promise.all(
  [process.stdout, process.stderr].map((s) => new Promise<void>((resolve) => s.write('', () => resolve()))),
);
// Anything left open (a pool's timer, stdin) must not keep the tool alive once its work is done.
process.exit(status);
