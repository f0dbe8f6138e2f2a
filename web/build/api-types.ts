import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import openapiTS, { astToString, type OpenAPI3 } from 'openapi-typescript';

/**
 * The dashboard's API types (STYLE: every call goes through the client generated from the served OpenAPI
 * document). `npm run web:api` exports the document the app serves and writes these types; a test
 * (test/web/api-types.test.ts) regenerates them from the served document and fails when the checked-in
 * file differs, and `npm run typecheck` checks the dashboard against them, so a contract change that
 * breaks the dashboard fails CI.
 */
export const API_TYPES_FILE = fileURLToPath(new URL('../src/api/openapi.d.ts', import.meta.url));

const HEADER = `/**
 * Generated from Ferry's served OpenAPI document by \`npm run web:api\` (web/build/api-types.ts).
 * Do not edit: change the API's schemas and regenerate.
 */

`;

/** Alphabetized, so the file does not change with the order in which the app registers its schemas. */
export async function renderApiTypes(document: object): Promise<string> {
  const ast = await openapiTS(document as OpenAPI3, { silent: true, alphabetize: true });
  return HEADER + astToString(ast);
}

// CLI: tsx web/build/api-types.ts <openapi.json>
if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const source = process.argv[2];
  if (!source) throw new Error('usage: tsx web/build/api-types.ts <openapi.json>');
  writeFileSync(API_TYPES_FILE, await renderApiTypes(JSON.parse(readFileSync(source, 'utf8')) as object));
  process.stdout.write(`API types written to ${API_TYPES_FILE}\n`);
}
