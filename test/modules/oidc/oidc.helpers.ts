import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT, type JWTPayload } from 'jose';
import Provider from 'oidc-provider';
import { createTestApp, type Engine, type TestApp } from '../../helpers/app.js';
import { freePort } from '../../helpers/scale-out.js';

export const CLIENT_ID = 'ferry-test';
export const CLIENT_SECRET = 'ferry-test-client-secret-0123456789';

/** Claims of an account at the test provider, as its ID tokens carry them. */
export interface ProviderAccount {
  sub: string;
  preferred_username?: string;
  email?: string;
  email_verified?: boolean;
  name?: string;
  groups?: string[];
}

export interface RealProvider {
  issuer: string;
  /** who the next sign-in at the provider is (the test's account store: it signs in without a form) */
  signInAs(account: ProviderAccount): void;
  close(): Promise<void>;
}

async function listening(server: http.Server): Promise<string> {
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/**
 * A real OpenID provider on loopback: the certified `oidc-provider`, with one confidential client (PKCE
 * required, as it is by default), a `groups` scope and claim, ID tokens that carry the scopes' claims, and an
 * interaction that signs in whoever `signInAs` named and grants what was asked (no forms).
 */
export async function startRealProvider(redirectUri: string): Promise<RealProvider> {
  let provider: Provider | null = null;
  const server = http.createServer((req, res) => provider!.callback()(req, res));
  const issuer = await listening(server);
  const accounts = new Map<string, ProviderAccount>();
  let next: ProviderAccount | null = null;
  const signing = await generateKeyPair('RS256', { extractable: true });
  provider = new Provider(issuer, {
    jwks: { keys: [{ ...(await exportJWK(signing.privateKey)), kid: 'test-provider', alg: 'RS256', use: 'sig' }] },
    clients: [
      {
        client_id: CLIENT_ID,
        client_secret: CLIENT_SECRET,
        redirect_uris: [redirectUri],
        response_types: ['code'],
        grant_types: ['authorization_code'],
      },
    ],
    scopes: ['openid', 'profile', 'email', 'groups'],
    claims: {
      openid: ['sub'],
      profile: ['preferred_username', 'name'],
      email: ['email', 'email_verified'],
      groups: ['groups'],
    },
    conformIdTokenClaims: false,
    features: { devInteractions: { enabled: false } },
    interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
    cookies: { keys: ['test-provider-cookie-key'] },
    findAccount: (_ctx, sub) => {
      const account = accounts.get(sub);
      return account ? { accountId: sub, claims: () => ({ ...account }) } : undefined;
    },
    loadExistingGrant: async (ctx) => {
      const grant = new ctx.oidc.provider.Grant({
        clientId: ctx.oidc.client!.clientId,
        accountId: ctx.oidc.session!.accountId!,
      });
      grant.addOIDCScope('openid profile email groups');
      await grant.save();
      return grant;
    },
  });
  provider.use(async (ctx, nextMiddleware) => {
    if (!ctx.path.startsWith('/interaction/')) return nextMiddleware();
    const account = next;
    if (!account) throw new Error('signInAs was not called');
    accounts.set(account.sub, account);
    ctx.respond = false;
    await provider!.interactionFinished(
      ctx.req,
      ctx.res,
      { login: { accountId: account.sub } },
      {
        mergeWithLastSubmission: false,
      },
    );
  });
  return {
    issuer,
    signInAs: (account) => {
      next = account;
    },
    close: async () => {
      server.closeAllConnections();
      server.close();
    },
  };
}

/**
 * A provider that is not one: discovery, a JWKS and a token endpoint whose ID token the test makes (signed with
 * the key it chooses, for the audience and expiry it chooses). The forged-token cases need it; the real provider
 * never signs a wrong token.
 */
export interface FakeProvider {
  issuer: string;
  /** the next ID token: claims given the nonce Ferry sent; `key: 'other'` signs it with a key not in the JWKS */
  nextIdToken(make: (nonce: string) => JWTPayload, key?: 'published' | 'other'): void;
  /** the nonce of the authorization request the test read from Ferry's redirect */
  nonce: string;
  close(): Promise<void>;
}

export async function startFakeProvider(): Promise<FakeProvider> {
  const published = await generateKeyPair('RS256');
  const other = await generateKeyPair('RS256');
  const jwk = { ...(await exportJWK(published.publicKey)), kid: 'k1', alg: 'RS256', use: 'sig' };
  let make: ((nonce: string) => JWTPayload) | null = null;
  let signer: 'published' | 'other' = 'published';
  const fake = { nonce: '' } as FakeProvider;
  let issuer = '';
  const server = http.createServer(async (req, res) => {
    const json = (body: unknown) =>
      res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'no-store' }).end(JSON.stringify(body));
    if (req.url === '/.well-known/openid-configuration')
      return json({
        issuer,
        authorization_endpoint: `${issuer}/auth`,
        token_endpoint: `${issuer}/token`,
        jwks_uri: `${issuer}/jwks`,
        response_types_supported: ['code'],
        subject_types_supported: ['public'],
        id_token_signing_alg_values_supported: ['RS256'],
        code_challenge_methods_supported: ['S256'],
      });
    if (req.url === '/jwks') return json({ keys: [jwk] });
    if (req.url === '/token' && req.method === 'POST') {
      for await (const _ of req); // the body (code, verifier) is not checked: the token is what is tested
      const claims = make!(fake.nonce);
      const key = signer === 'published' ? published.privateKey : other.privateKey;
      const idToken = await new SignJWT(claims).setProtectedHeader({ alg: 'RS256', kid: 'k1' }).sign(key);
      return json({ access_token: 'at', token_type: 'Bearer', expires_in: 60, id_token: idToken });
    }
    res.writeHead(404).end();
  });
  issuer = await listening(server);
  return Object.assign(fake, {
    issuer,
    nextIdToken(m: (nonce: string) => JWTPayload, key: 'published' | 'other' = 'published') {
      make = m;
      signer = key;
    },
    close: async () => {
      server.closeAllConnections();
      server.close();
    },
  });
}

/** Ferry listening on a real loopback port (the provider redirects a browser to it), on the given engine. */
export async function startFerry(
  engine: Engine,
  env: (origin: string) => Record<string, string>,
  /** what must exist before Ferry starts and needs its origin (the provider, which knows the callback) */
  before?: (origin: string) => Promise<void>,
): Promise<{ t: TestApp; origin: string }> {
  const port = await freePort();
  const origin = `http://127.0.0.1:${port}`;
  await before?.(origin);
  const t = await createTestApp(engine, { env: { PORT: String(port), PUBLIC_BASE_URL: origin, ...env(origin) } });
  await t.app.listen({ port, host: '127.0.0.1' });
  return { t, origin };
}

/** A browser's cookies, one jar per origin (enough here: each origin sets its own, on paths we do not rely on). */
export class Browser {
  private jars = new Map<string, Map<string, string>>();

  async get(url: string): Promise<{ status: number; location: string | null; text: string; headers: Headers }> {
    const u = new URL(url);
    const jar = this.jars.get(u.origin) ?? new Map<string, string>();
    this.jars.set(u.origin, jar);
    const cookie = [...jar].map(([k, v]) => `${k}=${v}`).join('; ');
    const res = await fetch(url, { redirect: 'manual', headers: cookie ? { cookie } : {} });
    for (const line of res.headers.getSetCookie()) {
      const [pair, ...attrs] = line.split(';');
      const eq = pair!.indexOf('=');
      const name = pair!.slice(0, eq).trim();
      const value = pair!.slice(eq + 1).trim();
      const expired = attrs.some((a) => /^\s*max-age=0\s*$/i.test(a)) || /expires=Thu, 01 Jan 1970/i.test(line);
      if (expired || value === '') jar.delete(name);
      else jar.set(name, value);
    }
    const location = res.headers.get('location');
    return {
      status: res.status,
      location: location === null ? null : new URL(location, url).href,
      text: await res.text(),
      headers: res.headers,
    };
  }

  /** This browser's cookie `name` for `origin`. */
  cookie(origin: string, name: string): string | undefined {
    return this.jars.get(origin)?.get(name);
  }

  setCookie(origin: string, name: string, value: string): void {
    const jar = this.jars.get(origin) ?? new Map<string, string>();
    jar.set(name, value);
    this.jars.set(origin, jar);
  }
}

/**
 * Starts a sign-in at Ferry and follows the provider's redirects until the provider sends the browser back to
 * Ferry's callback: that URL, not yet visited (so a test can tamper with it, replay it, or visit it).
 */
export async function untilCallback(browser: Browser, origin: string): Promise<string> {
  let url = `${origin}/auth/oidc/login`;
  for (let hop = 0; hop < 10; hop++) {
    const res = await browser.get(url);
    if (res.status < 300 || res.status >= 400 || !res.location)
      throw new Error(`sign-in stopped at ${url}: ${res.status} ${res.text.slice(0, 300)}`);
    if (res.location.startsWith(`${origin}/auth/oidc/callback`)) return res.location;
    url = res.location;
  }
  throw new Error('sign-in: too many redirects');
}

/** The login code of `/app/?login_code=…`, or null when the answer is not that redirect. */
export function loginCodeOf(location: string | null): string | null {
  if (!location) return null;
  const u = new URL(location);
  return u.pathname === '/app/' ? u.searchParams.get('login_code') : null;
}
