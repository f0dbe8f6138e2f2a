import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { API_TYPES_FILE, renderApiTypes } from '../../web/build/api-types.js';
import { useTestApp } from '../helpers/fixtures.js';

/**
 * The dashboard calls the API only through types generated from the served OpenAPI document. When the
 * contract changes, this fails until `npm run web:api` regenerates them; `npm run typecheck` then checks
 * the dashboard against the new types, so a contract change that breaks the dashboard fails CI.
 * (The document is the same on either engine: one run is enough.)
 */
describe("the dashboard's API types", () => {
  const t = useTestApp('sqlite');

  it('when generated again from the document the app serves, then they equal the checked-in web/src/api/openapi.d.ts', async () => {
    const served = await t.request({ url: '/v3/api-docs' });
    expect(served.status).toBe(200);
    const fresh = await renderApiTypes(served.body as object);
    const checkedIn = readFileSync(API_TYPES_FILE, 'utf8');
    // Not toEqual on the whole file: one clear sentence says what to do.
    expect(
      checkedIn === fresh,
      'web/src/api/openapi.d.ts is stale: run `npm run web:api` and commit it (then `npm run typecheck`)',
    ).toBe(true);
  });
});
