import type { ApiResponse, TestApp } from '../../helpers/app.js';
import type { CreatedUser } from '../../helpers/factories.js';

export const keysUrl = (userId: number | string, version = 1): string => `/api/v${version}/users/${userId}/api-keys`;

/** POST …/api-keys with the given JWT; fails the test unless 201. */
export async function createApiKey(
  t: TestApp,
  user: Pick<CreatedUser, 'id' | 'token'>,
  scopes: string[],
  extra: Record<string, unknown> = {},
): Promise<{ id: number; key: string; body: ApiResponse['body'] }> {
  const res = await t.request({
    method: 'POST',
    url: keysUrl(user.id),
    token: user.token,
    payload: { name: 'test key', scopes, ...extra },
  });
  if (res.status !== 201) throw new Error(`createApiKey: ${res.status} ${res.text}`);
  return { id: res.body.id as number, key: res.body.key as string, body: res.body };
}
