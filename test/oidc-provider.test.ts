/**
 * Gatehouse as an OpenID Connect provider, driven from the outside by `openid-client` 6 against a
 * running server on each database: discovery, the authorization code grant with PKCE through
 * /login and the consent page, ID tokens verified by `jose` against the JWKS, userinfo, refresh
 * token rotation and reuse detection, client credentials, JWT access tokens for a resource,
 * introspection and revocation, and what the database keeps afterwards.
 */
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRemoteJWKSet, decodeProtectedHeader, jwtVerify } from 'jose';
import { sql } from 'kysely';
import * as oidc from 'openid-client';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { MockClock } from '../src/clock.js';
import { loadConfig } from '../src/config.js';
import { createEnvelope } from '../src/crypto/envelope.js';
import { createOidcKeyStore } from '../src/db/oidc-key-store.js';
import { createStores } from '../src/db/stores.js';
import { makeKeyPairSet, retireSigningKey } from '../src/oidc-provider/keys.js';
import { createLogger } from '../src/logger.js';
import { startServer, type RunningServer } from '../src/server.js';
import { STRONG_PASSWORD, TEST_JWT_SECRET, describeEachDialect, openTestDatabase } from './support/harness.js';
import { createTestBrowser } from './support/oidc-browser.js';
import { totp } from './support/totp-oracle.js';

const ADMIN_KEY = 'oidc-provider-test-admin-key-0123456789';
const RESOURCE = 'https://api.example.test';
const APP = 'https://app.example.test/callback';
const ENCRYPTION_KEY = randomBytes(32);
const METRICS_TOKEN = 'oidc-provider-test-metrics-token-0123456789';

describeEachDialect('OpenID Connect provider', (dialect) => {
  let server: RunningServer;
  let drop: () => Promise<void>;
  let database: Awaited<ReturnType<typeof openTestDatabase>>['database'];
  const clock = new MockClock(Date.now());
  const secretsSeen: string[] = [];

  beforeAll(async () => {
    ({ database, drop } = await openTestDatabase(dialect));
    const config = loadConfig({
      JWT_SECRET: TEST_JWT_SECRET,
      BCRYPT_ROUNDS: '4',
      PORT: '0',
      HOST: '127.0.0.1',
      LOG_LEVEL: 'silent',
      ADMIN_API_KEY: ADMIN_KEY,
      ENCRYPTION_KEY_BASE64: ENCRYPTION_KEY.toString('base64'),
      METRICS_TOKEN: METRICS_TOKEN,
      OIDC_RESOURCES: RESOURCE,
      // Every test registers and signs in people from one address.
      RATE_LIMIT_REGISTER: '1000/1h',
      RATE_LIMIT_LOGIN: '1000/15m',
      RATE_LIMIT_OIDC_AUTHORIZE: '1000/1m',
    });
    server = await startServer(config, { clock, database, logger: createLogger({ level: 'silent' }) });
  });
  afterAll(async () => {
    await server?.stop();
    await drop?.();
  });

  const admin = async (method: string, path: string, body?: unknown): Promise<Response> =>
    fetch(`${server.url.replace('127.0.0.1', 'localhost')}/api/admin${path}`, {
      method,
      headers: { authorization: `Bearer ${ADMIN_KEY}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  const issuer = (): string => server.gatehouse.config.baseUrl;

  async function registerClient(body: Record<string, unknown>): Promise<{ clientId: string; clientSecret: string | undefined }> {
    const response = await admin('POST', '/clients', body);
    expect(response.status).toBe(201);
    const answer = (await response.json()) as { client: { clientId: string }; clientSecret?: string };
    if (answer.clientSecret !== undefined) secretsSeen.push(answer.clientSecret);
    return { clientId: answer.client.clientId, clientSecret: answer.clientSecret };
  }

  async function registerUser(): Promise<{ email: string; id: string }> {
    const email = `person-${randomBytes(4).toString('hex')}@example.com`;
    const response = await fetch(`${issuer()}/api/auth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: issuer() },
      body: JSON.stringify({ email, password: STRONG_PASSWORD }),
    });
    expect(response.status).toBe(201);
    const row = await sql<{ id: string }>`select id from users where email = ${email}`.execute(database.kysely);
    return { email, id: row.rows[0]!.id };
  }

  async function discover(clientId: string, clientSecret?: string): Promise<oidc.Configuration> {
    // The issuer is http on loopback in this test: the one switch is the one that allows http.
    return oidc.discovery(new URL(issuer()), clientId, clientSecret, undefined, { execute: [oidc.allowInsecureRequests] });
  }

  /** Plays the browser through authorize → /login → consent, and returns the redirect back to the app. */
  async function signInThroughBrowser(
    config: oidc.Configuration,
    person: { email: string },
    options: { scope?: string; consent?: 'allow' | 'deny' | 'none'; extra?: Record<string, string> } = {},
  ) {
    const codeVerifier = oidc.randomPKCECodeVerifier();
    const state = oidc.randomState();
    const url = oidc.buildAuthorizationUrl(config, {
      redirect_uri: APP,
      scope: options.scope ?? 'openid email offline_access',
      code_challenge: await oidc.calculatePKCECodeChallenge(codeVerifier),
      code_challenge_method: 'S256',
      state,
      ...(options.scope?.includes('offline_access') !== false ? { prompt: 'consent' } : {}),
      ...options.extra,
    });
    const browser = createTestBrowser(issuer());
    let step = await browser.open(url);
    expect(step.url.pathname).toBe('/login');
    expect(step.url.searchParams.get('return_to')).toMatch(/^\/consent\//);
    await browser.signIn(person.email, STRONG_PASSWORD);
    step = await browser.open(step.url.searchParams.get('return_to')!);
    if (options.consent !== 'none') {
      expect(step.response?.status).toBe(200);
      const page = await step.response!.text();
      expect(page).toContain('see your email address');
      step = await browser.open(step.url, { method: 'POST', form: { decision: options.consent ?? 'allow' } });
    }
    return { redirect: step.url, codeVerifier, state, browser };
  }

  describe('discovery and keys', () => {
    test('discovery lists every endpoint under /oauth2/, S256 only, and both signing algorithms', async () => {
      const document = (await (await fetch(`${issuer()}/.well-known/openid-configuration`)).json()) as Record<string, unknown>;
      expect(document.issuer).toBe(issuer());
      for (const key of [
        'authorization_endpoint',
        'token_endpoint',
        'userinfo_endpoint',
        'jwks_uri',
        'revocation_endpoint',
        'introspection_endpoint',
        'end_session_endpoint',
      ]) {
        expect(String(document[key])).toMatch(new RegExp(`^${issuer()}/oauth2/`));
      }
      expect(document.code_challenge_methods_supported).toEqual(['S256']);
      expect(document.id_token_signing_alg_values_supported).toEqual(expect.arrayContaining(['ES256', 'RS256']));
      expect(document.response_types_supported).toEqual(['code']);
      const rfc8414 = (await (await fetch(`${issuer()}/.well-known/oauth-authorization-server`)).json()) as Record<string, unknown>;
      expect(rfc8414.token_endpoint).toBe(document.token_endpoint);
      const jwks = (await (await fetch(String(document.jwks_uri))).json()) as { keys: Record<string, unknown>[] };
      expect(jwks.keys.map((key) => key.alg).sort()).toEqual(['ES256', 'RS256']);
      for (const key of jwks.keys) expect(key.d).toBeUndefined();
    });
  });

  describe('authorization code', () => {
    test('a third-party app: sign in on /login, consent, code with PKCE, ID token verified with the JWKS, userinfo, refresh', async () => {
      const person = await registerUser();
      const { clientId, clientSecret } = await registerClient({ name: 'Reports', redirectUris: [APP] });
      const config = await discover(clientId, clientSecret);
      const { redirect, codeVerifier, state } = await signInThroughBrowser(config, person);
      expect(redirect.origin + redirect.pathname).toBe(APP);
      const tokens = await oidc.authorizationCodeGrant(config, redirect, { pkceCodeVerifier: codeVerifier, expectedState: state });
      secretsSeen.push(tokens.access_token, tokens.refresh_token!, tokens.id_token!);
      const claims = tokens.claims()!;
      expect(claims.sub).toBe(person.id);
      expect(claims.iss).toBe(issuer());
      expect(claims.aud).toBe(clientId);
      expect(claims.amr).toEqual(['pwd']);
      expect(typeof claims.auth_time).toBe('number');
      expect(decodeProtectedHeader(tokens.id_token!).alg).toBe('ES256');
      const jwks = createRemoteJWKSet(new URL(`${issuer()}/oauth2/jwks`));
      await jwtVerify(tokens.id_token!, jwks, { issuer: issuer(), audience: clientId });

      const userinfo = await oidc.fetchUserInfo(config, tokens.access_token, person.id);
      expect(userinfo).toMatchObject({ sub: person.id, email: person.email, email_verified: false });

      const refreshed = await oidc.refreshTokenGrant(config, tokens.refresh_token!);
      secretsSeen.push(refreshed.access_token, refreshed.refresh_token!);
      expect(refreshed.refresh_token).not.toBe(tokens.refresh_token);
      expect(refreshed.claims()!.sub).toBe(person.id);
    });

    test('a refresh token used again after the grace revokes the whole grant; within the grace both refreshes work', async () => {
      const person = await registerUser();
      const { clientId, clientSecret } = await registerClient({ name: 'Reuse', redirectUris: [APP] });
      const config = await discover(clientId, clientSecret);
      const { redirect, codeVerifier, state } = await signInThroughBrowser(config, person);
      const tokens = await oidc.authorizationCodeGrant(config, redirect, { pkceCodeVerifier: codeVerifier, expectedState: state });
      const first = await oidc.refreshTokenGrant(config, tokens.refresh_token!);
      // Two refreshes racing: the same token again within the grace still works.
      const racing = await oidc.refreshTokenGrant(config, tokens.refresh_token!);
      expect(racing.access_token).toBeTruthy();
      clock.advance(6_000);
      await expect(oidc.refreshTokenGrant(config, tokens.refresh_token!)).rejects.toMatchObject({ error: 'invalid_grant' });
      // Everything of the grant died with it, the newest refresh token and access token too.
      await expect(oidc.refreshTokenGrant(config, first.refresh_token!)).rejects.toMatchObject({ error: 'invalid_grant' });
      const introspected = await oidc.tokenIntrospection(config, first.access_token);
      expect(introspected.active).toBe(false);
      const audit = await sql<{
        event_type: string;
        user_id: string | null;
      }>`select event_type, user_id from audit_events where event_type = 'oidc_refresh_reuse'`.execute(database.kysely);
      expect(audit.rows.some((row) => row.user_id === person.id)).toBe(true);
    });

    test('the grace runs from the first use: using the token again within it does not extend it', async () => {
      const person = await registerUser();
      const { clientId, clientSecret } = await registerClient({ name: 'Grace', redirectUris: [APP] });
      const config = await discover(clientId, clientSecret);
      const { redirect, codeVerifier, state } = await signInThroughBrowser(config, person);
      const tokens = await oidc.authorizationCodeGrant(config, redirect, { pkceCodeVerifier: codeVerifier, expectedState: state });
      await oidc.refreshTokenGrant(config, tokens.refresh_token!);
      clock.advance(4_000);
      await oidc.refreshTokenGrant(config, tokens.refresh_token!);
      clock.advance(4_000);
      await expect(oidc.refreshTokenGrant(config, tokens.refresh_token!)).rejects.toMatchObject({ error: 'invalid_grant' });
    });

    test('two redemptions of one code at the same moment: exactly one gets tokens', async () => {
      const person = await registerUser();
      const { clientId, clientSecret } = await registerClient({ name: 'Race', redirectUris: [APP] });
      const config = await discover(clientId, clientSecret);
      const { redirect, codeVerifier, state } = await signInThroughBrowser(config, person, { scope: 'openid email' });
      const results = await Promise.allSettled(
        Array.from({ length: 4 }, () => oidc.authorizationCodeGrant(config, redirect, { pkceCodeVerifier: codeVerifier, expectedState: state })),
      );
      expect(results.filter((result) => result.status === 'fulfilled')).toHaveLength(1);
    });

    test('a first-party app skips the consent page; the person can deny a third-party app', async () => {
      const person = await registerUser();
      const firstParty = await registerClient({ name: 'Own app', redirectUris: [APP], firstParty: true });
      const config = await discover(firstParty.clientId, firstParty.clientSecret);
      const signedIn = await signInThroughBrowser(config, person, { scope: 'openid email', consent: 'none' });
      expect(signedIn.redirect.searchParams.get('code')).toBeTruthy();

      const thirdParty = await registerClient({ name: 'Other app', redirectUris: [APP] });
      const denied = await signInThroughBrowser(await discover(thirdParty.clientId, thirdParty.clientSecret), person, {
        scope: 'openid email',
        consent: 'deny',
      });
      expect(denied.redirect.searchParams.get('error')).toBe('access_denied');
    });

    test('a first-party app gets a refresh token for offline_access without prompt=consent, and no consent page', async () => {
      const person = await registerUser();
      const { clientId, clientSecret } = await registerClient({ name: 'Own app offline', redirectUris: [APP], firstParty: true });
      const config = await discover(clientId, clientSecret);
      const verifier = oidc.randomPKCECodeVerifier();
      const browser = createTestBrowser(issuer());
      let step = await browser.open(
        oidc.buildAuthorizationUrl(config, {
          redirect_uri: APP,
          scope: 'openid email offline_access',
          code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
          code_challenge_method: 'S256',
          state: 'offline',
        }),
      );
      await browser.signIn(person.email, STRONG_PASSWORD);
      step = await browser.open(step.url.searchParams.get('return_to')!);
      expect(step.url.origin + step.url.pathname).toBe(APP);
      const tokens = await oidc.authorizationCodeGrant(config, step.url, { pkceCodeVerifier: verifier, expectedState: 'offline' });
      expect(tokens.refresh_token).toBeTruthy();
      expect(tokens.scope?.split(' ')).toContain('offline_access');
    });

    test('a code is refused a second time, and PKCE is required', async () => {
      const person = await registerUser();
      const { clientId, clientSecret } = await registerClient({ name: 'Twice', redirectUris: [APP] });
      const config = await discover(clientId, clientSecret);
      const { redirect, codeVerifier, state } = await signInThroughBrowser(config, person, { scope: 'openid email' });
      await oidc.authorizationCodeGrant(config, redirect, { pkceCodeVerifier: codeVerifier, expectedState: state });
      await expect(oidc.authorizationCodeGrant(config, redirect, { pkceCodeVerifier: codeVerifier, expectedState: state })).rejects.toMatchObject({
        error: 'invalid_grant',
      });

      const noPkce = new URL(`${issuer()}/oauth2/authorize`);
      noPkce.search = new URLSearchParams({ client_id: clientId, redirect_uri: APP, response_type: 'code', scope: 'openid' }).toString();
      const refused = await fetch(noPkce, { redirect: 'manual' });
      const location = new URL(refused.headers.get('location')!);
      expect(location.searchParams.get('error')).toBe('invalid_request');
    });
  });

  describe('prompt, and signing out through the app', () => {
    const SIGNED_OUT = 'https://app.example.test/signed-out';

    async function authorizeUrl(config: oidc.Configuration, extra: Record<string, string>): Promise<{ url: URL; verifier: string }> {
      const verifier = oidc.randomPKCECodeVerifier();
      const url = oidc.buildAuthorizationUrl(config, {
        redirect_uri: APP,
        scope: 'openid email',
        code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
        code_challenge_method: 'S256',
        state: oidc.randomState(),
        ...extra,
      });
      return { url, verifier };
    }

    test('prompt=none: a code while the Gatehouse session lives, login_required once it is signed out; prompt=login asks again', async () => {
      const person = await registerUser();
      const { clientId, clientSecret } = await registerClient({ name: 'Silent', redirectUris: [APP], firstParty: true });
      const config = await discover(clientId, clientSecret);
      const { browser } = await signInThroughBrowser(config, person, { scope: 'openid email', consent: 'none' });

      const silent = await browser.open((await authorizeUrl(config, { prompt: 'none' })).url);
      expect(silent.url.searchParams.get('code')).toBeTruthy();
      const again = await browser.open((await authorizeUrl(config, { prompt: 'login', login_hint: person.email })).url);
      expect(again.url.pathname).toBe('/login');
      // login_hint fills in the address on /login.
      expect(await again.response!.text()).toContain(`value="${person.email}"`);

      const signedOut = await fetch(`${issuer()}/api/auth/logout`, { method: 'POST', headers: { cookie: browser.cookieHeader(), origin: issuer() } });
      expect(signedOut.status).toBe(200);
      browser.forget('gatehouse_session');
      const refused = await browser.open((await authorizeUrl(config, { prompt: 'none' })).url);
      expect(refused.url.origin + refused.url.pathname).toBe(APP);
      expect(refused.url.searchParams.get('error')).toBe('login_required');
    });

    test('RP-initiated logout: confirmed, it ends the Gatehouse session too and returns to the registered address with the state', async () => {
      const person = await registerUser();
      const { clientId, clientSecret } = await registerClient({
        name: 'Signs out',
        redirectUris: [APP],
        postLogoutRedirectUris: [SIGNED_OUT],
        firstParty: true,
      });
      const config = await discover(clientId, clientSecret);
      const { redirect, codeVerifier, state, browser } = await signInThroughBrowser(config, person, { scope: 'openid email', consent: 'none' });
      const tokens = await oidc.authorizationCodeGrant(config, redirect, { pkceCodeVerifier: codeVerifier, expectedState: state });
      expect((await fetch(`${issuer()}/api/auth/session`, { headers: { cookie: browser.cookieHeader() } })).status).toBe(200);

      const endSession = oidc.buildEndSessionUrl(config, { id_token_hint: tokens.id_token!, post_logout_redirect_uri: SIGNED_OUT, state: 'bye-123' });
      const confirmPage = await browser.open(endSession);
      expect(confirmPage.response?.status).toBe(200);
      const page = await confirmPage.response!.text();
      const action = /<form[^>]*action="([^"]+)"/.exec(page)![1]!;
      const xsrf = /name="xsrf" value="([^"]+)"/.exec(page)![1]!;
      const done = await browser.open(new URL(action, issuer()), { method: 'POST', form: { xsrf, logout: 'yes' } });
      expect(done.url.origin + done.url.pathname).toBe(SIGNED_OUT);
      expect(done.url.searchParams.get('state')).toBe('bye-123');

      const session = await fetch(`${issuer()}/api/auth/session`, { headers: { cookie: browser.cookieHeader() } });
      expect(session.status).toBe(401);
      const audit = await sql<{ metadata: string }>`select metadata from audit_events where event_type = 'logout' and user_id = ${person.id}`.execute(
        database.kysely,
      );
      expect(audit.rows.map((row) => JSON.parse(row.metadata) as { via?: string })).toEqual([expect.objectContaining({ via: 'oidc_end_session' })]);
    });
  });

  describe('acr_values=mfa', () => {
    async function authorize(config: oidc.Configuration) {
      const verifier = oidc.randomPKCECodeVerifier();
      const url = oidc.buildAuthorizationUrl(config, {
        redirect_uri: APP,
        scope: 'openid email',
        acr_values: 'mfa',
        code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
        code_challenge_method: 'S256',
        state: 'mfa-state',
      });
      return { url, verifier };
    }

    test('an account without a second factor: the app is told unmet_authentication_requirements', async () => {
      const person = await registerUser();
      const { clientId, clientSecret } = await registerClient({ name: 'Needs MFA', redirectUris: [APP], firstParty: true });
      const config = await discover(clientId, clientSecret);
      const browser = createTestBrowser(issuer());
      const step = await browser.open((await authorize(config)).url);
      await browser.signIn(person.email, STRONG_PASSWORD);
      const back = await browser.open(step.url.searchParams.get('return_to')!);
      expect(back.url.origin + back.url.pathname).toBe(APP);
      expect(back.url.searchParams.get('error')).toBe('unmet_authentication_requirements');
    });

    test('an account with an authenticator app: the code step on /login, then an ID token with acr mfa and amr pwd, otp, mfa', async () => {
      const person = await registerUser();
      // Two-factor sign-in needs a verified address; the link's own flow is tested elsewhere.
      await createStores(database.kysely, dialect).users.markEmailVerified(person.id);
      const setupBrowser = createTestBrowser(issuer());
      await setupBrowser.signIn(person.email, STRONG_PASSWORD);
      const setup = await setupBrowser.post('/api/auth/2fa/totp/setup', { currentPassword: STRONG_PASSWORD });
      const setupBody = await setup.text();
      expect(setup.status, setupBody).toBe(200);
      const { secret } = JSON.parse(setupBody) as { secret: string };
      expect((await setupBrowser.post('/api/auth/2fa/totp/enable', { code: totp(secret, clock.now().getTime()) })).status).toBe(200);
      clock.advance(30_000);

      const { clientId, clientSecret } = await registerClient({ name: 'Needs MFA too', redirectUris: [APP], firstParty: true });
      const config = await discover(clientId, clientSecret);
      const browser = createTestBrowser(issuer());
      const { url, verifier } = await authorize(config);
      const step = await browser.open(url);
      const first = (await (await browser.post('/api/auth/login', { email: person.email, password: STRONG_PASSWORD })).json()) as { mfaRequired?: boolean };
      expect(first.mfaRequired).toBe(true);
      expect((await browser.post('/api/auth/2fa/verify', { code: totp(secret, clock.now().getTime()) })).status).toBe(200);
      const back = await browser.open(step.url.searchParams.get('return_to')!);
      expect(back.url.searchParams.get('code')).toBeTruthy();
      const tokens = await oidc.authorizationCodeGrant(config, back.url, { pkceCodeVerifier: verifier, expectedState: 'mfa-state' });
      expect(tokens.claims()).toMatchObject({ acr: 'mfa', amr: ['pwd', 'otp', 'mfa'] });
    });
  });

  describe('device authorization grant', () => {
    /** The hidden fields and action of the engine's form on a page (the xsrf token, the user code). */
    function formOf(page: string, id: string): { action: string; fields: Record<string, string> } {
      const form = new RegExp(`<form[^>]*id="${id.replace('.', '\\.')}"[^>]*>([\\s\\S]*?)</form>`).exec(page);
      expect(form, page).not.toBeNull();
      const action = /action="([^"]+)"/.exec(form![0])![1]!;
      const fields = Object.fromEntries([...form![1]!.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)"/g)].map((match) => [match[1]!, match[2]!]));
      return { action, fields };
    }

    test('a device shows a code; the person enters it at /device, signs in, consents, confirms; the device gets tokens once', async () => {
      const person = await registerUser();
      const { clientId, clientSecret } = await registerClient({ name: 'Living-room TV', grantTypes: ['device_code', 'refresh_token'] });
      const config = await discover(clientId, clientSecret);
      const device = await oidc.initiateDeviceAuthorization(config, { scope: 'openid email offline_access' });
      expect(device.verification_uri).toBe(`${issuer()}/device`);
      secretsSeen.push(device.device_code, device.user_code.replace('-', ''));

      const pending = await fetch(String(config.serverMetadata().token_endpoint), {
        method: 'POST',
        headers: {
          authorization: `Basic ${Buffer.from(`${clientId}:${clientSecret!}`).toString('base64')}`,
          'content-type': 'application/x-www-form-urlencoded',
        },
        body: new URLSearchParams({ grant_type: 'urn:ietf:params:oauth:grant-type:device_code', device_code: device.device_code }),
      });
      expect(((await pending.json()) as { error: string }).error).toBe('authorization_pending');

      const browser = createTestBrowser(issuer());
      const input = await browser.open(device.verification_uri);
      const inputPage = await input.response!.text();
      expect(inputPage).toContain('Enter the code your device shows.');
      const entry = formOf(inputPage, 'op.deviceInputForm');
      const confirmStep = await browser.open(new URL(entry.action, issuer()), { method: 'POST', form: { ...entry.fields, user_code: device.user_code } });
      const confirmPage = await confirmStep.response!.text();
      expect(confirmPage).toContain('Living-room TV');
      expect(confirmPage).toContain(device.user_code);
      const confirm = formOf(confirmPage, 'op.deviceConfirmForm');
      let step = await browser.open(new URL(confirm.action, issuer()), { method: 'POST', form: confirm.fields });
      expect(step.url.pathname).toBe('/login');
      await browser.signIn(person.email, STRONG_PASSWORD);
      step = await browser.open(step.url.searchParams.get('return_to')!);
      expect(await step.response!.text()).toContain('Living-room TV asks to:');
      const done = await browser.open(step.url, { method: 'POST', form: { decision: 'allow' } });
      expect(await done.response!.text()).toContain('Living-room TV is signed in');

      const tokens = await oidc.genericGrantRequest(config, 'urn:ietf:params:oauth:grant-type:device_code', { device_code: device.device_code });
      secretsSeen.push(tokens.access_token, tokens.refresh_token!);
      expect(tokens.claims()!.sub).toBe(person.id);
      await expect(oidc.genericGrantRequest(config, 'urn:ietf:params:oauth:grant-type:device_code', { device_code: device.device_code })).rejects.toMatchObject(
        { error: 'invalid_grant' },
      );
    });

    test('a wrong code is refused on the page without signing anyone in', async () => {
      const browser = createTestBrowser(issuer());
      const input = await browser.open('/device');
      const entry = formOf(await input.response!.text(), 'op.deviceInputForm');
      const wrong = await browser.open(new URL(entry.action, issuer()), { method: 'POST', form: { ...entry.fields, user_code: 'BCDF-GHJK' } });
      expect(wrong.response?.status).toBe(200);
      expect(await wrong.response!.text()).toContain('That code is not right');
    });
  });

  describe('back-channel logout', () => {
    test('a session ended on Gatehouse sends each app with a back-channel URI a signed logout token; a failed one is retried', async () => {
      const received: { status: number; body: string }[] = [];
      let answer = 204;
      const receiver = http.createServer((request, response) => {
        let body = '';
        request.on('data', (chunk: Buffer) => (body += chunk.toString()));
        request.on('end', () => {
          received.push({ status: answer, body });
          response.writeHead(answer).end();
        });
      });
      await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
      try {
        const receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/backchannel`;
        const person = await registerUser();
        const { clientId, clientSecret } = await registerClient({
          name: 'Told of logouts',
          redirectUris: [APP],
          backchannelLogoutUri: receiverUrl,
          firstParty: true,
        });
        const config = await discover(clientId, clientSecret);
        const { browser } = await signInThroughBrowser(config, person, { scope: 'openid email', consent: 'none' });

        expect((await fetch(`${issuer()}/api/auth/logout`, { method: 'POST', headers: { cookie: browser.cookieHeader(), origin: issuer() } })).status).toBe(
          200,
        );
        await server.gatehouse.deliverWebhooks();
        expect(received).toHaveLength(1);
        const logoutToken = new URLSearchParams(received[0]!.body).get('logout_token')!;
        const { payload, protectedHeader } = await jwtVerify(logoutToken, createRemoteJWKSet(new URL(`${issuer()}/oauth2/jwks`)), {
          issuer: issuer(),
          audience: clientId,
          typ: 'logout+jwt',
        });
        expect(protectedHeader.alg).toBe('ES256');
        expect(payload.sub).toBe(person.id);
        expect(payload.events).toEqual({ 'http://schemas.openid.net/event/backchannel-logout': {} });
        expect(payload.nonce).toBeUndefined();
        expect(typeof payload.jti).toBe('string');

        // Disabled by an operator, while the app is down: tried again 5 s later, then delivered.
        answer = 503;
        await browser.signIn(person.email, STRONG_PASSWORD);
        const disabled = await admin('POST', `/users/${person.id}/disable`);
        expect(disabled.status).toBe(200);
        await server.gatehouse.deliverWebhooks();
        expect(received.map((each) => each.status)).toEqual([204, 503]);
        answer = 204;
        await server.gatehouse.deliverWebhooks();
        expect(received).toHaveLength(2);
        clock.advance(5_000);
        await server.gatehouse.deliverWebhooks();
        expect(received.map((each) => each.status)).toEqual([204, 503, 204]);
      } finally {
        await new Promise((resolve) => receiver.close(resolve));
      }
    });
  });

  describe('client credentials, resources, introspection, revocation', () => {
    test('an opaque token introspects active until revoked; a resource gets a JWT access token it verifies with the JWKS alone', async () => {
      const { clientId, clientSecret } = await registerClient({ name: 'Batch job', grantTypes: ['client_credentials'] });
      const config = await discover(clientId, clientSecret);
      const opaque = await oidc.clientCredentialsGrant(config);
      secretsSeen.push(opaque.access_token);
      expect((await oidc.tokenIntrospection(config, opaque.access_token)).active).toBe(true);
      await oidc.tokenRevocation(config, opaque.access_token);
      expect((await oidc.tokenIntrospection(config, opaque.access_token)).active).toBe(false);

      const forApi = await oidc.clientCredentialsGrant(config, { resource: RESOURCE });
      expect(decodeProtectedHeader(forApi.access_token).typ).toBe('at+jwt');
      const { payload } = await jwtVerify(forApi.access_token, createRemoteJWKSet(new URL(`${issuer()}/oauth2/jwks`)), {
        issuer: issuer(),
        audience: RESOURCE,
        typ: 'at+jwt',
      });
      expect(payload.client_id).toBe(clientId);
      await expect(oidc.clientCredentialsGrant(config, { resource: 'https://not-registered.example' })).rejects.toMatchObject({ error: 'invalid_target' });
    });
  });

  describe('at rest', () => {
    test('the database holds no code, token or client secret that was handed out', async () => {
      expect(secretsSeen.length).toBeGreaterThan(5);
      const tables = ['oidc_records', 'oidc_clients', 'oidc_signing_keys', 'audit_events'];
      for (const table of tables) {
        const rows = await sql<Record<string, unknown>>`select * from ${sql.table(table)}`.execute(database.kysely);
        const dump = JSON.stringify(rows.rows);
        for (const secret of secretsSeen) expect(dump).not.toContain(secret);
      }
      const keys = await sql<{ private_jwk_sealed: string }>`select private_jwk_sealed from oidc_signing_keys`.execute(database.kysely);
      for (const key of keys.rows) expect(key.private_jwk_sealed).not.toContain('"d"');
    });
  });
  // Last: it moves the clock an hour on.
  describe('signing keys and metrics', () => {
    test('tokens issued are counted by grant type on /metrics', async () => {
      const { clientId, clientSecret } = await registerClient({ name: 'Counted', grantTypes: ['client_credentials'] });
      await oidc.clientCredentialsGrant(await discover(clientId, clientSecret));
      const text = await (await fetch(`${issuer()}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })).text();
      const counted = /^gatehouse_oidc_tokens_issued_total\{grant_type="client_credentials"\} (\d+)$/m.exec(text);
      expect(Number(counted?.[1])).toBeGreaterThanOrEqual(1);
      expect(text).toMatch(/^gatehouse_oidc_tokens_issued_total\{grant_type="authorization_code"\} \d+$/m);
    });

    test('a rotation is published at once and signs after its delay; servers use it within 30 s; a retired key leaves the JWKS', async () => {
      const keys = createOidcKeyStore(database.kysely);
      const envelope = createEnvelope([ENCRYPTION_KEY]);
      const jwksKids = async () => ((await (await fetch(`${issuer()}/oauth2/jwks`)).json()) as { keys: { kid: string }[] }).keys.map((key) => key.kid).sort();
      const { clientId, clientSecret } = await registerClient({ name: 'Key watcher', grantTypes: ['client_credentials'] });
      const config = await discover(clientId, clientSecret);
      const signingKid = async () => decodeProtectedHeader((await oidc.clientCredentialsGrant(config, { resource: RESOURCE })).access_token).kid!;
      const before = await jwksKids();
      const oldKid = await signingKid();
      expect(before).toContain(oldKid);

      const rotated = await makeKeyPairSet(envelope, clock.now(), new Date(clock.now().getTime() + 3_600_000));
      await keys.insertKeys(rotated);
      expect(await jwksKids()).toEqual(before);
      clock.advance(31_000);
      expect(await jwksKids()).toEqual([...before, ...rotated.map((key) => key.kid)].sort());
      expect(await signingKid()).toBe(oldKid);

      clock.advance(3_600_000);
      const newEs256 = rotated.find((key) => key.alg === 'ES256')!.kid;
      expect(await signingKid()).toBe(newEs256);
      expect(await retireSigningKey(keys, oldKid, clock.now())).toBe('retired');
      clock.advance(31_000);
      const after = await jwksKids();
      expect(after).not.toContain(oldKid);
      expect(after).toContain(newEs256);
      expect(await retireSigningKey(keys, newEs256, clock.now())).toBe('last_key');
    });
  });
});
