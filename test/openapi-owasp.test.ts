import { readFileSync } from 'node:fs';
import path from 'node:path';
import {
  Document,
  Ruleset,
  Spectral,
  type ISpectralDiagnostic,
  type RulesetDefinition,
} from '@stoplight/spectral-core';
import { Json } from '@stoplight/spectral-parsers';
import owasp from '@stoplight/spectral-owasp-ruleset';
import { parse } from '@stoplight/yaml';
import { describe, expect, it } from 'vitest';
import { useTestApp } from './helpers/fixtures.js';

const root = path.resolve(import.meta.dirname, '..');
const SEVERITY = ['error', 'warning', 'info', 'hint'];

/** .spectral.yaml, as the CLI reads it: its one `extends` is the OWASP ruleset package. */
function loadRuleset(): Ruleset {
  const file = path.join(root, '.spectral.yaml');
  const definition = parse<RulesetDefinition & { extends: string[] }>(readFileSync(file, 'utf8'));
  expect(definition.extends).toEqual(['@stoplight/spectral-owasp-ruleset']);
  // The package is CommonJS for TypeScript and ESM for Vitest: take its default export either way.
  const owaspRuleset = ((owasp as unknown as { default?: RulesetDefinition }).default ??
    owasp) as unknown as RulesetDefinition;
  return new Ruleset({ ...definition, extends: [owaspRuleset] } as RulesetDefinition, { source: file });
}

/** "GET /api/v1/users/{id} (getUser), responses.200.headers: rule — message", so a failure names what to fix. */
function describeFinding(
  d: ISpectralDiagnostic,
  doc: { paths: Record<string, Record<string, { operationId?: string }>> },
): string {
  const [top, p, method, ...rest] = d.path.map(String);
  const where =
    top === 'paths' && p && method && doc.paths[p]?.[method]
      ? `${method.toUpperCase()} ${p} (${doc.paths[p][method].operationId ?? 'no operationId'}), ${rest.join('.')}`
      : d.path.join('.');
  return `${SEVERITY[d.severity]} ${d.code} at ${where}: ${d.message}`;
}

/**
 * The served document passes Spectral's OWASP API Top 10 ruleset (.spectral.yaml, with its reasoned
 * exceptions) with no finding at all, errors or warnings: routes added later are linted when they arrive.
 * On SQLite only: the document does not depend on the engine.
 */
describe('the OpenAPI document and the OWASP API Security Top 10 ruleset', () => {
  const t = useTestApp('sqlite');

  it('when linted, then nothing is found', async () => {
    const res = await t.request({ url: '/v3/api-docs' });
    expect(res.status).toBe(200);
    const spectral = new Spectral();
    spectral.setRuleset(loadRuleset());
    // The ruleset's exceptions are matched by file name: the document is linted as if it lay in the repository.
    const findings = await spectral.run(new Document(res.text, Json, path.join(root, 'openapi.generated.json')));
    expect(findings.map((d) => describeFinding(d, res.body))).toEqual([]);
  }, 60_000);

  it('when the ruleset is read, then every rule it turns off says why', () => {
    const lines = readFileSync(path.join(root, '.spectral.yaml'), 'utf8').split('\n');
    lines.forEach((line, i) => {
      if (/:\s*off\s*$/.test(line)) {
        let j = i - 1;
        while (j >= 0 && /^\s*owasp:.*:\s*off\s*$/.test(lines[j]!)) j -= 1;
        expect(lines[j], `line ${i + 1}: ${line.trim()} needs a comment above it`).toMatch(/^\s*#/);
      }
    });
  });
});
