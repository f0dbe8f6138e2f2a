/**
 * Writes the OpenAPI document the app serves to a file (for `redocly lint` and the strict 3.1 validator).
 * Builds the app exactly as production does, on a throw-away data directory.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Validator } from '@seriousme/openapi-schema-validator';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { createStorage } from '../src/db/database.js';

const out = process.argv[2] ?? 'openapi.generated.json';
const dir = mkdtempSync(path.join(tmpdir(), 'ferry-openapi-'));
const config = loadConfig({ DATA_DIR: dir, LOG_LEVEL: 'silent' });
const storage = createStorage(config);
const app = await buildApp(config, { storage });
const res = await app.inject({ method: 'GET', url: '/v3/api-docs' });
await app.close();
await storage.close();
rmSync(dir, { recursive: true, force: true });
writeFileSync(out, res.body);

const validator = new Validator();
const result = await validator.validate(JSON.parse(res.body) as Record<string, unknown>);
if (!result.valid) {
  process.stderr.write(
    `OpenAPI document is not valid OpenAPI ${validator.version}:\n${JSON.stringify(result.errors, null, 2)}\n`,
  );
  process.exit(1);
}
process.stdout.write(
  `OpenAPI ${validator.version} document written to ${out}: valid against the official OpenAPI 3.1 JSON Schema\n`,
);
