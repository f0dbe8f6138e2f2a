import { describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { configProblems } from './helpers/config-problems.js';

/** SPEC §23's variables: defaults, the list of admin groups, and the rules across them. */
describe('single sign-on configuration', () => {
  it('when nothing is set, then no single sign-on and the documented defaults', () => {
    expect(loadConfig({})).toMatchObject({
      oidcIssuer: null,
      oidcClientId: null,
      oidcClientSecret: null,
      oidcScopes: 'openid profile email',
      oidcUsernameClaim: 'preferred_username',
      oidcGroupsClaim: 'groups',
      oidcAdminGroups: [],
      oidcDisplayName: 'single sign-on',
    });
  });

  it('when set, then the issuer is kept exactly (a trailing slash too) and the admin groups are a trimmed list', () => {
    const c = loadConfig({
      OIDC_ISSUER: 'https://authentik.example.com/application/o/ferry/',
      OIDC_CLIENT_ID: 'ferry',
      OIDC_ADMIN_GROUPS: ' ferry-admins ,ops,, ',
    });
    expect(c.oidcIssuer).toBe('https://authentik.example.com/application/o/ferry/');
    expect(c.oidcAdminGroups).toEqual(['ferry-admins', 'ops']);
  });

  it('when the issuer lacks a client id, is plain http off loopback, or the scopes lack openid, then one line each', () => {
    expect(configProblems({ OIDC_ISSUER: 'https://idp.example.com' })).toContain(
      'OIDC_CLIENT_ID: must be set with OIDC_ISSUER',
    );
    expect(configProblems({ OIDC_ISSUER: 'http://idp.example.com', OIDC_CLIENT_ID: 'x' })).toContain(
      'OIDC_ISSUER: must be an https URL (http only on a loopback address)',
    );
    expect(
      configProblems({ OIDC_ISSUER: 'https://idp.example.com', OIDC_CLIENT_ID: 'x', OIDC_SCOPES: 'profile' }),
    ).toContain('OIDC_SCOPES: must include openid');
    expect(() => loadConfig({ OIDC_ISSUER: 'http://127.0.0.1:8080', OIDC_CLIENT_ID: 'x' })).not.toThrow();
  });

  it('when the client secret is refused, then its value is not echoed', () => {
    const problems = configProblems({ OIDC_CLIENT_SECRET: 's'.repeat(600) });
    expect(problems).toContain('OIDC_CLIENT_SECRET');
    expect(problems).not.toContain('s'.repeat(60));
  });
});
