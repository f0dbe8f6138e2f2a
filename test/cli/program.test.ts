import type { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { createProgram, runCli } from '../../src/cli/program.js';

/** One in-process invocation of `ferry` with captured output (parsing and help need no database). */
async function ferry(...argv: string[]): Promise<{ status: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const status = await runCli({
    argv,
    env: { DATA_DIR: '/nonexistent/ferry-cli-parse-only' },
    stdout: { write: (s: string) => ((stdout += s), true) },
    stderr: { write: (s: string) => ((stderr += s), true) },
    stdin: process.stdin,
  });
  return { status, stdout, stderr };
}

/** Every command path of the program (`users list`, `keys create`, …), found by walking it. */
function commandPaths(): string[][] {
  const program = createProgram(
    { argv: [], env: {}, stdout: process.stdout, stderr: process.stderr, stdin: process.stdin },
    () => undefined,
  );
  const paths: string[][] = [];
  const walk = (cmd: Command, at: string[]) => {
    for (const sub of cmd.commands) {
      const here = [...at, sub.name()];
      paths.push(here);
      walk(sub, here);
    }
  };
  walk(program, []);
  return paths;
}

describe('ferry: the command line', () => {
  it('when any command is asked for --help, then it prints its usage with the --json option and exits 0', async () => {
    const paths = commandPaths();
    expect(paths.map((p) => p.join(' '))).toEqual(
      expect.arrayContaining([
        'admin create',
        'users list',
        'users activate',
        'users suspend',
        'users set-password',
        'keys create',
        'keys revoke',
        'migrate',
      ]),
    );
    for (const path of [[], ...paths]) {
      const run = await ferry(...path, '--help');
      expect(run.status, path.join(' ')).toBe(0);
      expect(run.stdout).toContain(`Usage: ferry ${path.join(' ')}`.trimEnd());
      expect(run.stdout).toContain('--json');
    }
  });

  it('when the command line is wrong, then it says so on stderr and exits 2', async () => {
    for (const argv of [
      ['no-such-command'],
      ['users'],
      ['users', 'list', '--no-such-option'],
      ['users', 'activate'],
      ['keys', 'create', 'ada', '--scope', 'links:read'],
      ['users', 'list', '--status', 'sleeping'],
    ]) {
      const run = await ferry(...argv);
      expect(run.status, argv.join(' ')).toBe(2);
      expect(run.stderr, argv.join(' ')).not.toBe('');
    }
  });

  it("when help is shown at a terminal, then it is wrapped to that terminal's width, and to 80 columns through a pipe", async () => {
    const widest = async (stdout: { isTTY?: boolean; columns?: number }) => {
      let text = '';
      const status = await runCli({
        argv: ['links', 'list', '--help'],
        env: {},
        stdout: { ...stdout, write: (s: string) => ((text += s), true) },
        stderr: { write: () => true },
        stdin: process.stdin,
      });
      expect(status).toBe(0);
      return Math.max(...text.split('\n').map((l) => l.length));
    };
    const atTerminal = await widest({ isTTY: true, columns: 70 });
    expect(atTerminal).toBeLessThanOrEqual(70);
    expect(await widest({ columns: 70 })).toBeGreaterThan(atTerminal);
    expect(await widest({})).toBeLessThanOrEqual(80);
  });

  it('when the configuration is invalid, then the command names the variable and exits 2', async () => {
    let stderr = '';
    const status = await runCli({
      argv: ['users', 'list'],
      env: { PORT: 'eighty' },
      stdout: { write: () => true },
      stderr: { write: (s: string) => ((stderr += s), true) },
      stdin: process.stdin,
    });
    expect(status).toBe(2);
    expect(stderr).toMatch(/PORT/);
  });
});
