import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const CONTAINERFILE = readFileSync(path.resolve(import.meta.dirname, '../../Containerfile'), 'utf8');

/** What the Containerfile says, read without podman (container.test.ts builds and runs it where podman is). */
describe('the Containerfile', () => {
  it('when a build argument is declared, then it has a default: podman warns about each one a build leaves unset', () => {
    const args = [...CONTAINERFILE.matchAll(/^ARG\s+(\S+)/gm)].map((m) => m[1]!);
    expect(args).toEqual(
      expect.arrayContaining(['NODE_IMAGE=node:22-bookworm-slim', 'NPM_CONFIG_CAFILE=', 'NODE_EXTRA_CA_CERTS=']),
    );
    expect(args.filter((a) => !a.includes('='))).toEqual([]);
  });

  it("when the image starts, then it runs what npm start runs, with npm start's V8 flags", () => {
    const pkg = JSON.parse(readFileSync(path.resolve(import.meta.dirname, '../../package.json'), 'utf8')) as {
      scripts: { start: string };
    };
    const cmd = /^CMD (\[.*\])$/m.exec(CONTAINERFILE)?.[1];
    expect(cmd).toBeDefined();
    expect((JSON.parse(cmd!) as string[]).join(' ')).toBe(pkg.scripts.start);
    expect(pkg.scripts.start).toMatch(/^node --max-semi-space-size=\d+ dist\/src\/server\.js$/);
  });
});
