import type { TestApp } from '../../helpers/app.js';
import { createLink } from '../../helpers/factories.js';
import { addDomain } from '../domains/domains.helpers.js';

/**
 * Four links of one owner whose records each retention keeps for a different time (SPEC §24): one on the
 * instance's own domain, one on a domain keeping them forever (`0`), one on a domain keeping them `longerDays`,
 * and one on a domain that inherits the instance's (`null`). `domains`: each link's host name (none: the
 * instance's); `created`: the three domains.
 */
export async function linksOfEachRetention(t: TestApp, token: string, longerDays: number) {
  const forever = await addDomain(t, token, { click_retention_days: 0 });
  const longer = await addDomain(t, token, { click_retention_days: longerDays });
  const inherits = await addDomain(t, token);
  const links = {
    instance: await createLink(t, { original_url: 'https://example.com/i' }, token),
    forever: await createLink(t, { original_url: 'https://example.com/f', domain: forever.hostname }, token),
    longer: await createLink(t, { original_url: 'https://example.com/l', domain: longer.hostname }, token),
    inherits: await createLink(t, { original_url: 'https://example.com/n', domain: inherits.hostname }, token),
  };
  const domains = {
    instance: undefined,
    forever: forever.hostname,
    longer: longer.hostname,
    inherits: inherits.hostname,
  };
  return { links, domains, created: { forever, longer, inherits } };
}
