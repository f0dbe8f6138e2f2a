import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { compiledEntry } from './helpers/child-process.js';
import { configProblems } from './helpers/config-problems.js';

// SPEC §12: start-up errors about configuration never print a secret's value.
describe('configuration errors keep secrets', () => {
  it.each([
    ['JWT_SECRET', 'short-Hunter2x'],
    ['ADMIN_PASSWORD', 'Hunter2x'.repeat(20)],
    ['ADMIN_PASSWORD', 'Hunt2'],
  ])('when %s is rejected, then the message names it and its length but not its text', (name, value) => {
    const message = configProblems({ [name]: value, ADMIN_USERNAME: 'root' });
    expect(message).toMatch(
      new RegExp(`^Invalid configuration: ${name}=\\(${value.length} characters, not shown\\): must`),
    );
    expect(message).not.toContain(value.slice(0, 5));
  });

  it.each([
    ['DATABASE_URL', 'mysql://ferry:Hunter2x@db.example/ferry', 'mysql://ferry:***@db.example/ferry'],
    ['DATABASE_URL', 'postgress://ferry:Hun/ter@2x@db.example/ferry', 'postgress://ferry:***@db.example/ferry'],
    ['REDIS_URL', 'http://:Hunter2x@cache.example:6379', 'http://:***@cache.example:6379'],
    ['REDIS_URL', 'redis//Hunter2x@cache.example', 'redis//***@cache.example'],
  ])('when %s with credentials is rejected, then the password is masked', (name, value, shown) => {
    const message = configProblems({ [name]: value });
    expect(message).toContain(`${name}=${JSON.stringify(shown)}`);
    expect(message).not.toMatch(/Hunter|Hun\/ter/);
  });

  it('when the real server starts with a bad JWT_SECRET, ADMIN_PASSWORD and DATABASE_URL, then stderr names them and holds no secret', async () => {
    const dataDir = path.join(mkdtempSync(path.join(tmpdir(), 'ferry-cfg-')), 'data');
    try {
      const child = spawn(process.execPath, [compiledEntry('src/server.ts')], {
        cwd: path.resolve(import.meta.dirname, '..'),
        env: {
          PATH: process.env.PATH,
          HOME: process.env.HOME,
          DATA_DIR: dataDir,
          JWT_SECRET: 'Hunter2x-too-short',
          ADMIN_USERNAME: 'root',
          ADMIN_PASSWORD: 'Hunt2',
          DATABASE_URL: 'pg://ferry:Hunter2x@db.example/ferry',
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let output = '';
      child.stderr.on('data', (d: Buffer) => (output += d.toString()));
      child.stdout.on('data', (d: Buffer) => (output += d.toString()));
      const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
      expect(code, output).toBe(1);
      expect(output).toMatch(/JWT_SECRET=/);
      expect(output).toMatch(/ADMIN_PASSWORD=/);
      expect(output).toMatch(/DATABASE_URL="pg:\/\/ferry:\*\*\*@db\.example\/ferry"/);
      expect(output).not.toMatch(/Hunter2x|Hunt2/);
    } finally {
      rmSync(path.dirname(dataDir), { recursive: true, force: true });
    }
  }, 60_000);
});
