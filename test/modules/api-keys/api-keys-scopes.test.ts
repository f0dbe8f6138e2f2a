import { describe, expect, it } from 'vitest';
import { SCOPES } from '../../../src/lib/scopes.js';
import { createUser } from '../../helpers/factories.js';
import { useTestApp } from '../../helpers/fixtures.js';
import { createApiKey } from './api-keys.helpers.js';

const ALL: string[] = [...SCOPES];
type Security = Array<Record<string, string[]>>;

/**
 * The document and the app agree on API keys, for every operation there is (including those added later):
 * an operation that lists a scope takes a key with that scope and refuses one without it (403
 * INSUFFICIENT_SCOPE naming the scope); an operation that needs a credential but lists no key scheme refuses
 * every key (403 FORBIDDEN). On SQLite only: the document is the same on both engines.
 */
describe('API keys and the operations the document says they may call', () => {
  const t = useTestApp('sqlite');

  it('when each operation is called with a key with and without its scope, then the app does what its security says', async () => {
    const admin = await createUser(t, { role: 'admin', status: 'active' });
    const keys = new Map<string, string>();
    for (const scope of ALL) keys.set(scope, (await createApiKey(t, admin, [scope])).key);
    const everything = (await createApiKey(t, admin, ALL)).key;
    let checked = 0;
    for (const [path, item] of Object.entries(t.contract.doc.paths)) {
      for (const [method, op] of Object.entries(item as Record<string, { security?: Security }>)) {
        const security = op.security ?? [];
        const credentialNeeded = security.length > 0 && security.every((s) => Object.keys(s).length > 0);
        const scope = security.find((s) => s.apiKey)?.apiKey?.[0];
        if (!path.startsWith('/api/') || (!scope && !credentialNeeded)) continue;
        // The admin's own id where a path names a user, so that ownership never decides; nothing exists elsewhere.
        const url = path.replace('{id}', String(admin.id)).replace(/\{[^}]+\}/g, '98765432');
        const payload = ['POST', 'PUT', 'PATCH'].includes(method.toUpperCase()) ? {} : undefined;
        const call = (token: string) => t.request({ method: method.toUpperCase() as 'GET', url, payload, token });
        const where = `${method.toUpperCase()} ${path}`;
        if (!scope) {
          const res = await call(everything);
          expect(res.status, where).toBe(403);
          expect(res.body.error.code, where).toBe('FORBIDDEN');
        } else {
          expect(security, where).toContainEqual({ apiKey: [scope] });
          const allowed = await call(keys.get(scope)!);
          expect([401, 403], `${where} with ${scope}: ${allowed.text.slice(0, 200)}`).not.toContain(allowed.status);
          const other = ALL.find((s) => s !== scope)!;
          const refused = await call(keys.get(other)!);
          expect(refused.status, where).toBe(403);
          expect(refused.body.error.code, where).toBe('INSUFFICIENT_SCOPE');
          expect(refused.headers['www-authenticate'], where).toBe(
            `Bearer error="insufficient_scope", scope="${scope}"`,
          );
        }
        checked += 1;
      }
    }
    expect(checked).toBeGreaterThan(20);
  });
});
