import { describe, expect, it } from 'vitest';
import { startFerry } from '../helpers/cli.js';

/**
 * `ferry … | head`: the reader of the tool's output may go away before the tool writes (or finishes writing).
 * Its work is not undone by that, and a write into the closed pipe (EPIPE) is not a crash with a stack trace.
 */
describe('ferry: output into a pipe that was closed', () => {
  it('when the reader of stdout has gone before the tool writes, then it ends with its own status and says nothing of EPIPE', async () => {
    const run = startFerry(['--help'], {});
    // The tool takes a moment to start: the pipe is closed long before it prints its usage.
    run.child.stdout!.destroy();
    const result = await run.done;
    expect(result.stderr).not.toMatch(/EPIPE|Error|at /);
    expect(result.status).toBe(0);
  });

  it('when the reader of stderr has gone too, then a failing command still ends with its own status (2: bad usage)', async () => {
    const run = startFerry(['no-such-command'], {});
    run.child.stdout!.destroy();
    run.child.stderr!.destroy();
    expect((await run.done).status).toBe(2);
  });
});
