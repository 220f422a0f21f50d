/**
 * Revocation of what Gatehouse as an OpenID Connect provider issued reaches every instance at once:
 * "Apps with access" (GET/DELETE /api/auth/grants), disabling, deleting and a password reset each
 * end every grant, and introspection answers `active: false` on another instance sharing the
 * database (two servers on one PostgreSQL schema; one server on SQLite). Driven by openid-client.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import * as oidc from 'openid-client';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { loadConfig } from '../src/config.js';
import { createLogger } from '../src/logger.js';
import { startServer, type RunningServer } from '../src/server.js';
import { STRONG_PASSWORD, TEST_JWT_SECRET, describeEachDialect } from './support/harness.js';
import { createTestBrowser, type TestBrowser } from './support/oidc-browser.js';
import { throwawaySchemaUrl } from './support/throwaway-schema.js';

const ADMIN_KEY = 'oidc-revocation-test-admin-key-0123456789';
const APP = 'https://app.example.test/callback';
const ENCRYPTION_KEY = randomBytes(32).toString('base64');

describeEachDialect('OpenID Connect revocation', (dialect) => {
  const servers: RunningServer[] = [];
  const cleanups: (() => Promise<void>)[] = [];

  beforeAll(async () => {
    const databaseUrl =
      dialect === 'sqlite'
        ? `sqlite:${path.join(mkdtempSync(path.join(tmpdir(), 'gh-oidc-')), 'gatehouse.db')}`
        : await throwawaySchemaUrl((cleanup) => void cleanups.push(cleanup));
    const env = {
      JWT_SECRET: TEST_JWT_SECRET,
      NODE_ENV: 'development',
      BCRYPT_ROUNDS: '4',
      PORT: '0',
      HOST: '127.0.0.1',
      LOG_LEVEL: 'silent',
      ADMIN_API_KEY: ADMIN_KEY,
      ENCRYPTION_KEY_BASE64: ENCRYPTION_KEY,
      DATABASE_URL: databaseUrl,
    };
    // Two instances on PostgreSQL behind one public address (BASE_URL, the issuer): what one
    // issues, the other redeems, checks and revokes.
    servers.push(await startServer(loadConfig(env), { logger: createLogger({ level: 'silent' }) }));
    if (dialect === 'postgres') {
      const baseUrl = servers[0]!.gatehouse.config.baseUrl;
      servers.push(await startServer(loadConfig({ ...env, BASE_URL: baseUrl }), { logger: createLogger({ level: 'silent' }) }));
    }
  });
  afterAll(async () => {
    for (const server of servers) await server.stop();
    for (const cleanup of cleanups) await cleanup();
  });

  const first = () => servers[0]!.gatehouse.config.baseUrl;
  /** The last instance's own address (the first's is the public one). */
  const last = () => servers.at(-1)!.url.replace('127.0.0.1', 'localhost');

  /** The client as if the proxy sent its back-channel requests to the last instance. */
  function atLastInstance(config: oidc.Configuration, clientId: string, clientSecret: string): oidc.Configuration {
    const metadata = { ...config.serverMetadata() };
    for (const key of ['token_endpoint', 'introspection_endpoint', 'revocation_endpoint', 'userinfo_endpoint'] as const) {
      const endpoint = metadata[key];
      if (typeof endpoint === 'string') metadata[key] = endpoint.replace(first(), last());
    }
    const other = new oidc.Configuration(metadata, clientId, clientSecret);
    oidc.allowInsecureRequests(other);
    return other;
  }

  async function admin(method: string, adminPath: string): Promise<Response> {
    return fetch(`${first()}/api/admin${adminPath}`, { method, headers: { authorization: `Bearer ${ADMIN_KEY}` } });
  }

  /** A person signed in to an app through the code flow on the first instance; its tokens, and a client configured for the last instance. */
  async function signedInApp(options: { email?: string } = {}) {
    const email = options.email ?? `person-${randomBytes(4).toString('hex')}@example.com`;
    const registered = await fetch(`${first()}/api/auth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: first() },
      body: JSON.stringify({ email, password: STRONG_PASSWORD }),
    });
    expect(registered.status).toBe(201);
    const created = await fetch(`${first()}/api/admin/clients`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN_KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: `App ${randomBytes(2).toString('hex')}`, redirectUris: [APP] }),
    });
    const { client, clientSecret } = (await created.json()) as { client: { clientId: string; name: string }; clientSecret: string };
    const config = await oidc.discovery(new URL(first()), client.clientId, clientSecret, undefined, { execute: [oidc.allowInsecureRequests] });
    const verifier = oidc.randomPKCECodeVerifier();
    const state = oidc.randomState();
    const browser = createTestBrowser(first());
    let step = await browser.open(
      oidc.buildAuthorizationUrl(config, {
        redirect_uri: APP,
        scope: 'openid email offline_access',
        prompt: 'consent',
        code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
        code_challenge_method: 'S256',
        state,
      }),
    );
    await browser.signIn(email, STRONG_PASSWORD);
    step = await browser.open(step.url.searchParams.get('return_to')!);
    step = await browser.open(step.url, { method: 'POST', form: { decision: 'allow' } });
    const tokens = await oidc.authorizationCodeGrant(config, step.url, { pkceCodeVerifier: verifier, expectedState: state });
    return { email, client, tokens, browser, config, other: atLastInstance(config, client.clientId, clientSecret) };
  }

  async function userIdOf(browser: TestBrowser): Promise<string> {
    const response = await fetch(`${first()}/api/auth/session`, { headers: { cookie: browser.cookieHeader() } });
    const body = (await response.json()) as { user: { id: string } };
    return body.user.id;
  }

  async function expectRevoked(app: Awaited<ReturnType<typeof signedInApp>>): Promise<void> {
    expect((await oidc.tokenIntrospection(app.other, app.tokens.access_token)).active).toBe(false);
    await expect(oidc.refreshTokenGrant(app.other, app.tokens.refresh_token!)).rejects.toMatchObject({ error: 'invalid_grant' });
  }

  test('Apps with access: listed with its scopes; removing it ends its tokens on every instance; asked again it is 404', async () => {
    const app = await signedInApp();
    expect((await oidc.tokenIntrospection(app.other, app.tokens.access_token)).active).toBe(true);
    const listed = await fetch(`${last()}/api/auth/grants`, { headers: { cookie: app.browser.cookieHeader() } });
    expect(listed.status).toBe(200);
    const { grants } = (await listed.json()) as { grants: { clientId: string; clientName: string; scopes: string[]; createdAt: string }[] };
    expect(grants).toEqual([
      { clientId: app.client.clientId, clientName: app.client.name, scopes: ['openid', 'email', 'offline_access'], createdAt: expect.any(String) },
    ]);

    const removed = await fetch(`${first()}/api/auth/grants/${app.client.clientId}`, {
      method: 'DELETE',
      headers: { cookie: app.browser.cookieHeader(), origin: first() },
    });
    expect(removed.status).toBe(200);
    await expectRevoked(app);
    const again = await fetch(`${first()}/api/auth/grants/${app.client.clientId}`, {
      method: 'DELETE',
      headers: { cookie: app.browser.cookieHeader(), origin: first() },
    });
    expect(again.status).toBe(404);
    expect(((await again.json()) as { error: string }).error).toBe('not_found');
    const empty = (await (await fetch(`${first()}/api/auth/grants`, { headers: { cookie: app.browser.cookieHeader() } })).json()) as { grants: unknown[] };
    expect(empty.grants).toEqual([]);
    expect((await fetch(`${first()}/api/auth/grants`)).status).toBe(401);
  });

  test('a code issued by one instance redeems on another, once', async () => {
    const app = await signedInApp();
    // signedInApp redeemed its code on the first instance; a fresh one is redeemed on the last.
    const verifier = oidc.randomPKCECodeVerifier();
    const step = await app.browser.open(
      oidc.buildAuthorizationUrl(app.config, {
        redirect_uri: APP,
        scope: 'openid email',
        code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
        code_challenge_method: 'S256',
        state: 'across',
      }),
    );
    const tokens = await oidc.authorizationCodeGrant(app.other, step.url, { pkceCodeVerifier: verifier, expectedState: 'across' });
    expect(tokens.claims()!.sub).toBe(await userIdOf(app.browser));
    await expect(oidc.authorizationCodeGrant(app.config, step.url, { pkceCodeVerifier: verifier, expectedState: 'across' })).rejects.toMatchObject({
      error: 'invalid_grant',
    });
  });

  test('disabling the account revokes every grant', async () => {
    const app = await signedInApp();
    expect((await admin('POST', `/users/${await userIdOf(app.browser)}/disable`)).status).toBe(200);
    await expectRevoked(app);
  });

  test('deleting the account revokes every grant', async () => {
    const app = await signedInApp();
    expect((await admin('DELETE', `/users/${await userIdOf(app.browser)}`)).status).toBe(200);
    await expectRevoked(app);
  });

  test('a password reset revokes every grant', async () => {
    const app = await signedInApp();
    const requested = await fetch(`${first()}/api/auth/password-reset/request`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: first() },
      body: JSON.stringify({ email: app.email }),
    });
    const { token } = (await requested.json()) as { token: string };
    const confirmed = await fetch(`${first()}/api/auth/password-reset/confirm`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: first() },
      body: JSON.stringify({ token, password: 'Another-Horse-7' }),
    });
    expect(confirmed.status).toBe(200);
    await expectRevoked(app);
  });
});
