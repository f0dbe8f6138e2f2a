import { readFileSync } from 'node:fs';
import { Value } from 'typebox/value';
import { describe, expect, it } from 'vitest';
import { CONFIG_DOC, withConfigTable } from '../scripts/config-docs.js';
import { variables } from '../src/config.js';
import { readVariable, ruleOf } from '../src/lib/env-variables.js';

describe('the configuration schema and its documentation', () => {
  it('when docs/configuration.md is read, then its table is the one src/config.ts gives (else: npm run docs:config)', () => {
    const doc = readFileSync(CONFIG_DOC, 'utf8');
    expect(withConfigTable(doc), 'the table is stale: run `npm run docs:config`').toBe(doc);
  });

  it.each(Object.entries(variables))('when %s is unset, then its default satisfies its own schema', (_name, schema) => {
    expect(Value.Check(schema, (schema as { default?: unknown }).default)).toBe(true);
  });

  it.each(Object.entries(variables))(
    'when %s is refused, then the line states its rule (its reader exists)',
    (_name, schema) => {
      expect(ruleOf(schema)).toMatch(/^(be|not be) /);
      // a value most variables refuse; a misnamed reader would throw a TypeError instead of the rule
      try {
        readVariable(schema, '\u0000 not a value \u0000');
      } catch (err) {
        expect((err as Error).message.startsWith('must ')).toBe(true);
      }
    },
  );
});
