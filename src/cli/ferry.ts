/** Process entry of the `ferry` command-line tool (package.json `bin`, through bin/ferry.mjs). */
import { runCli } from './program.js';

const status = await runCli({ argv: process.argv.slice(2), env: process.env, stdout: process.stdout, stderr: process.stderr, stdin: process.stdin });
// Anything left open (a pool's timer, stdin) must not keep the tool alive once its work is done.
process.exit(status);
