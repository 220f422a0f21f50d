/**
 * Sign in with GitHub, end to end over real HTTP against a GitHub-compatible server on loopback
 * (support/fake-github.ts), on every available database.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, beforeEach, expect, test } from 'vitest';
import type { AuditEvent } from '../src/audit/audit-log.js';
import { createEnvelope } from '../src/crypto/envelope.js';
import { loadConfig } from '../src/config.js';
import { createGatehouse } from '../src/gatehouse.js';
import { createLogger } from '../src/logger.js';
import { createCodeChallenge } from '../src/oauth/pkce.js';
import { startFakeGitHub, type FakeGitHub, type FakeGitHubEmail } from './support/fake-github.js';
import { totp } from './support/totp-oracle.js';
import {
  STRONG_PASSWORD,
  TEST_JWT_SECRET,
  cookieFrom,
  createTestGatehouse,
  describeEachDialect,
  setCookieHeader,
  type Dialect,
  type TestGatehouse,
} from './support/harness.js';

const PENDING = 'gatehouse_oauth';
/** A pending sign-in's cookie is `gatehouse_oauth_<digest of its state>`: one per sign-in. */
const pendingNameOf = (response: Response): string =>
  response.headers
    .getSetCookie()
    .map((header) => header.split('=')[0]!)
    .find((name) => name.startsWith(`${PENDING}_`) || name.startsWith(`__Host-${PENDING}_`))!;
const SESSION = 'gatehouse_session';
const AUTH_SECRET = 'test-auth-secret-0123456789';
const KEY = randomBytes(32);
const PROVIDER_TIMEOUT_MS = 400;

let fake: FakeGitHub;
beforeAll(async () => {
  fake = await startFakeGitHub();
});
afterAll(async () => {
  await fake.close();
});

/** What the harness sets besides the provider variables. */
const baseTestEnv = (): Record<string, string> => ({ JWT_SECRET: TEST_JWT_SECRET, BCRYPT_ROUNDS: '4', BASE_URL: 'http://localhost:3000', LOG_LEVEL: 'silent' });

function oauthEnv(overrides: Record<string, string> = {}): Record<string, string> {
  return {
    GITHUB_CLIENT_ID: fake.clientId,
    GITHUB_CLIENT_SECRET: fake.clientSecret,
    GITHUB_AUTH_URL: fake.authUrl,
    GITHUB_API_URL: fake.apiUrl,
    AUTH_SECRET,
    ENCRYPTION_KEY_BASE64: KEY.toString('base64'),
    ...overrides,
  };
}

let nextGitHubId = 1000;
/** A fresh GitHub user; `emails` defaults to one primary, verified address. */
function gitHubUser(login: string, emails?: FakeGitHubEmail[]): { id: number; login: string } {
  const user = { id: (nextGitHubId += 1), login, emails: emails ?? [{ email: `${login}@example.com`, primary: true, verified: true }] };
  fake.setUser(user);
  return user;
}

/**
 * `value` and everything it decodes to, every way a reader might try: each run of base64 or
 * base64url characters decoded, read as text, as bytes and as hex, and the text decoded again
 * (a JSON payload inside a cookie part, a sealed value inside the JSON), three levels deep.
 */
function decodings(value: string, depth = 0): string[] {
  const found = [value];
  if (depth === 0) found.push(decodeURIComponent(value));
  if (depth === 3) return found;
  for (const part of value.split(/[^A-Za-z0-9_+/-]+/)) {
    if (part.length < 8) continue;
    // Node's base64 decoder takes both alphabets, with or without padding.
    const bytes = Buffer.from(part, 'base64');
    found.push(bytes.toString('latin1'), bytes.toString('hex'));
    found.push(...decodings(bytes.toString('utf8'), depth + 1));
  }
  return found;
}

describeEachDialect('Sign in with GitHub', (dialect: Dialect) => {
  let t: TestGatehouse;

  const open = (env: Record<string, string>): Promise<TestGatehouse> =>
    createTestGatehouse(dialect, { env, overrides: { providerHTTP: { timeoutMs: PROVIDER_TIMEOUT_MS } } });

  beforeEach(async () => {
    fake.expiringTokens = false;
    t = await open(oauthEnv());
  });
  afterEach(async () => {
    await t.close();
  });

  const start = async (returnTo?: string) => {
    const query = returnTo === undefined ? '' : `?return_to=${encodeURIComponent(returnTo)}`;
    const response = await t.request('GET', `/api/auth/oauth/github${query}`);
    expect(response.status).toBe(302);
    return { location: response.headers.get('location')!, cookie: cookieFrom(response, pendingNameOf(response))!, response };
  };
  const callback = (url: URL, cookie?: string) => t.request('GET', `${url.pathname}${url.search}`, cookie ? { cookie } : {});
  const signIn = async (login: string, returnTo?: string) => {
    const started = await start(returnTo);
    return callback(await fake.authorize(started.location, { login }), started.cookie);
  };
  const sessionOf = async (response: Response) => {
    const answer = await t.request('GET', '/api/auth/session', { cookie: cookieFrom(response, SESSION) });
    expect(answer.status).toBe(200);
    return (await answer.json()) as { user: { id: string; email: string | null; emailVerified: boolean; lastLoginAt: string | null } };
  };
  /** The login-page redirect of a failed sign-in: its error code and message. */
  const loginPageError = (response: Response) => {
    expect(response.status).toBe(302);
    const url = new URL(response.headers.get('location')!, 'http://localhost:3000');
    expect(url.origin + url.pathname).toBe('http://localhost:3000/login');
    return { error: url.searchParams.get('error'), message: url.searchParams.get('message') ?? '' };
  };
  const events = (): Promise<AuditEvent[]> => t.gatehouse.stores.audit.listRecentEvents(50);
  const lastFailure = async () => (await events()).find((e) => e.type === 'login_failure')!;
  const expectPendingCookieCleared = (response: Response) => {
    expect(setCookieHeader(response, pendingNameOf(response))).toMatch(/Max-Age=0/);
  };
  /** Every row of every table, as text: for proving a secret is nowhere in the database. */
  const dumpDatabase = async (): Promise<string> => {
    const kysely = t.database.kysely;
    const tables = await Promise.all(
      (['users', 'sessions', 'audit_events', 'accounts'] as const).map((table) => kysely.selectFrom(table).selectAll().execute()),
    );
    return JSON.stringify(tables);
  };

  test('linking to an unverified account also removes what its registrant planted: a pending email change, a passkey', async () => {
    const registered = await t.request('POST', '/api/auth/register', { json: { email: 'planted@example.com', password: 'Squatter-Pass-1' } });
    const squatter = cookieFrom(registered, SESSION)!;
    const changed = await t.request('POST', '/api/auth/email/change', {
      cookie: squatter,
      json: { newEmail: 'squatter-new@example.com', currentPassword: 'Squatter-Pass-1' },
    });
    expect(changed.status).toBe(200);
    const owner = (await t.gatehouse.stores.users.findUserByEmail('planted@example.com'))!;
    expect(await t.gatehouse.stores.emailChangeTokens.listPendingEmails(owner.id)).toEqual(['squatter-new@example.com']);
    // And a passkey of theirs (test/passkeys.test.ts adds one over HTTP; here the store is enough).
    const passkey = { id: randomUUID(), userId: owner.id, credentialId: 'c3F1YXR0ZXI', publicKey: 'AQ', counter: 0, transports: [], name: 'Squatter' };
    await t.gatehouse.stores.passkeys.addPasskey({ ...passkey, createdAt: t.clock.now(), lastUsedAt: null });
    gitHubUser('planted', [{ email: 'planted@example.com', primary: true, verified: true }]);
    expect((await signIn('planted')).status).toBe(302);
    expect(await t.gatehouse.stores.emailChangeTokens.listPendingEmails(owner.id)).toEqual([]);
    expect(await t.gatehouse.stores.passkeys.countUserPasskeys(owner.id)).toBe(0);
    expect((await t.request('GET', '/api/auth/session', { cookie: squatter })).status).toBe(401);
  });

  test('session.methods names the provider; a 2FA account lands on /login?mfa=required with a challenge and no session, and the code gives it', async () => {
    gitHubUser('octo2fa');
    const first = await signIn('octo2fa');
    const cookie = cookieFrom(first, SESSION)!;
    expect((await (await t.request('GET', '/api/auth/session', { cookie })).json()).session.methods).toEqual(['github']);
    // A provider-only account re-authenticates by its fresh sign-in.
    const { secret } = await (await t.request('POST', '/api/auth/2fa/totp/setup', { cookie, json: {} })).json();
    expect((await t.request('POST', '/api/auth/2fa/totp/enable', { cookie, json: { code: totp(secret, t.clock.now().getTime()) } })).status).toBe(200);

    const second = await signIn('octo2fa', '/after-sign-in');
    expect(second.status).toBe(302);
    expect(second.headers.get('location')).toBe('/login?mfa=required');
    expect(cookieFrom(second, SESSION)).toBeUndefined();
    const challenge = cookieFrom(second, 'gatehouse_mfa')!;
    expect(challenge).toBeDefined();
    const verified = await t.request('POST', '/api/auth/2fa/verify', { cookie: challenge, json: { code: totp(secret, t.clock.now().getTime(), 1) } });
    expect(verified.status).toBe(200);
    expect(await verified.json()).toEqual({ ok: true, returnTo: '/after-sign-in' });
    const session = await (await t.request('GET', '/api/auth/session', { cookie: cookieFrom(verified, SESSION)! })).json();
    expect(session.session.methods).toEqual(['github', 'totp']);
  });

  test('GET /oauth/github redirects to GitHub with client_id, redirect_uri, scope, state and an S256 challenge', async () => {
    const { location, response } = await start();
    const url = new URL(location);
    expect(url.origin + url.pathname).toBe(`${fake.authUrl}/authorize`);
    expect(url.searchParams.get('client_id')).toBe(fake.clientId);
    expect(url.searchParams.get('redirect_uri')).toBe('http://localhost:3000/api/auth/callback/github');
    expect(url.searchParams.get('scope')).toBe('read:user user:email');
    expect(url.searchParams.get('state')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(url.searchParams.get('code_challenge')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(url.searchParams.get('code_challenge_method')).toBe('S256');
    const header = setCookieHeader(response, pendingNameOf(response))!;
    expect(header).toMatch(/; HttpOnly/);
    expect(header).toMatch(/; SameSite=Lax/);
    expect(header).toMatch(/; Max-Age=600/);
    expect(header).toMatch(/; Path=\//);
    expect(header).not.toMatch(/; Secure/);
    // The signed cookie holds this very state and the return path; the verifier only sealed (the
    // next test looks for it there).
    const payload = JSON.parse(Buffer.from(cookieFrom(response, pendingNameOf(response))!.split('=')[1]!.split('.')[0]!, 'base64url').toString()) as {
      s: string;
      c: string;
      r: string;
    };
    expect(payload.s).toBe(url.searchParams.get('state'));
    expect(payload.c).toMatch(/^v1\./);
    expect(payload.r).toBe('/dashboard');
    const second = await start();
    expect(new URL(second.location).searchParams.get('state')).not.toBe(url.searchParams.get('state'));
  });

  test('the pending cookie never holds the PKCE verifier: no part of it, decoded any way, contains the verifier GitHub receives', async () => {
    gitHubUser('sealed');
    const started = await start();
    const value = started.cookie.slice(started.cookie.indexOf('=') + 1);
    const before = fake.requests.length;
    const back = await fake.authorize(started.location, { login: 'sealed' });
    expect((await callback(back, started.cookie)).headers.get('location')).toBe('/dashboard');
    const tokenRequest = fake.requests.slice(before).find((r) => r.path === '/login/oauth/access_token')!;
    const verifier = new URLSearchParams(tokenRequest.body).get('code_verifier')!;
    // The very verifier behind this sign-in's challenge, sent to GitHub at the callback.
    expect(createCodeChallenge(verifier)).toBe(new URL(started.location).searchParams.get('code_challenge'));
    const raw = Buffer.from(verifier, 'base64url');
    const seen = decodings(value);
    expect(seen.length).toBeGreaterThan(5);
    for (const text of seen) {
      expect(text).not.toContain(verifier);
      expect(text).not.toContain(raw.toString('latin1'));
      expect(text).not.toContain(raw.toString('hex'));
    }
    expect(started.location).not.toContain(verifier);
  });

  test('its redirects carry the API headers and a request id, and each cookie exactly once', async () => {
    // Redirects are built by Hono, and the answer's header record (src/http/answer.ts) is merged
    // into them after the handler: nothing may be missing, nothing doubled.
    gitHubUser('redirect-headers');
    const started = await start();
    const finished = await callback(await fake.authorize(started.location, { login: 'redirect-headers' }), started.cookie);
    expect(finished.status).toBe(302);
    for (const [name, response, cookies] of [
      ['start', started.response, [PENDING]],
      ['callback', finished, [PENDING, SESSION]],
    ] as const) {
      expect(response.headers.get('content-security-policy'), name).toBe("default-src 'none'; frame-ancestors 'none'");
      expect(response.headers.get('cache-control'), name).toBe('no-store');
      expect(response.headers.get('x-frame-options'), name).toBe('DENY');
      expect(response.headers.get('x-request-id'), name).toMatch(/^[0-9a-f-]{36}$/);
      expect(
        response.headers.getSetCookie().map((cookie) => (cookie.startsWith(`${PENDING}_`) ? PENDING : cookie.split('=')[0])),
        name,
      ).toEqual(cookies);
    }
  });

  test('unknown providers answer a JSON 404 not_found', async () => {
    for (const path of ['/api/auth/oauth/gitlab', '/api/auth/callback/gitlab?code=x&state=y']) {
      const response = await t.request('GET', path);
      expect(response.status).toBe(404);
      expect(await response.json()).toMatchObject({ error: 'not_found' });
    }
  });

  test('case 3: a new GitHub user becomes a new user with the verified primary email, signed in with the usual session', async () => {
    const octo = gitHubUser('octocat', [
      { email: 'octo-other@example.com', primary: false, verified: true },
      { email: 'Octocat@Example.com', primary: true, verified: true },
    ]);
    const response = await signIn('octocat', '/settings?tab=profile');
    expect(response.status).toBe(302);
    expect(response.headers.get('location')).toBe('/settings?tab=profile');
    expectPendingCookieCleared(response);
    const sessionHeader = setCookieHeader(response, SESSION)!;
    expect(sessionHeader).toMatch(/; HttpOnly/);
    expect(sessionHeader).toMatch(/; SameSite=Lax/);
    expect(sessionHeader).toMatch(/; Max-Age=86400/);
    const { user } = await sessionOf(response);
    expect(user).toMatchObject({ email: 'octocat@example.com', emailVerified: true, lastLoginAt: t.clock.now().toISOString() });

    const accounts = await t.gatehouse.stores.accounts.listUserAccounts(user.id);
    expect(accounts).toHaveLength(1);
    expect(accounts[0]).toMatchObject({
      provider: 'github',
      providerAccountId: String(octo.id),
      providerLogin: 'octocat',
      scope: 'read:user user:email',
      refreshTokenEnc: null,
      accessTokenExpiresAt: null,
    });

    const [success, created] = await events();
    expect(created).toMatchObject({
      type: 'user_created',
      userId: user.id,
      metadata: { method: 'oauth', provider: 'github', providerUserId: String(octo.id), providerLogin: 'octocat' },
    });
    expect(success).toMatchObject({
      type: 'login_success',
      userId: user.id,
      metadata: { provider: 'github', providerUserId: String(octo.id), providerLogin: 'octocat', linkedBy: 'new_user' },
    });
  });

  test('GitHub is called as GitHub expects: JSON token request with the verifier, Bearer and User-Agent on the API', async () => {
    gitHubUser('headers');
    const before = fake.requests.length;
    const started = await start();
    const challenge = new URL(started.location).searchParams.get('code_challenge');
    expect((await callback(await fake.authorize(started.location, { login: 'headers' }), started.cookie)).status).toBe(302);
    const seen = fake.requests.slice(before);
    const tokenRequest = seen.find((r) => r.path === '/login/oauth/access_token')!;
    expect(tokenRequest.headers.accept).toBe('application/json');
    const form = new URLSearchParams(tokenRequest.body);
    expect(form.get('redirect_uri')).toBe('http://localhost:3000/api/auth/callback/github');
    expect(form.get('code_verifier')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(form.get('code_verifier')).not.toBe(challenge);
    for (const path of ['/user', '/user/emails']) {
      const apiRequest = seen.find((r) => r.path === path)!;
      expect(apiRequest.headers['user-agent']).toBe('Gatehouse');
      expect(apiRequest.headers.authorization).toMatch(/^Bearer gho_/);
    }
  });

  test('case 1: an existing link signs in the same user and refreshes the stored token and login', async () => {
    const octo = gitHubUser('monalisa');
    const first = await sessionOf(await signIn('monalisa'));
    const [before] = await t.gatehouse.stores.accounts.listUserAccounts(first.user.id);

    t.clock.advance(60_000);
    fake.setUser({ id: octo.id, login: 'mona-renamed', emails: [{ email: 'monalisa@example.com', primary: true, verified: true }] });
    const again = await signIn('mona-renamed');
    const second = await sessionOf(again);
    expect(second.user.id).toBe(first.user.id);

    const accounts = await t.gatehouse.stores.accounts.listUserAccounts(first.user.id);
    expect(accounts).toHaveLength(1);
    expect(accounts[0]!.providerLogin).toBe('mona-renamed');
    expect(accounts[0]!.accessTokenEnc).not.toBe(before!.accessTokenEnc);
    expect(accounts[0]!.updatedAt).toEqual(t.clock.now());
    const envelope = createEnvelope([KEY]);
    expect(envelope.open(accounts[0]!.accessTokenEnc, `${accounts[0]!.id}.access_token`)).toBe(fake.issuedTokens.at(-1));
    expect((await events())[0]).toMatchObject({ type: 'login_success', metadata: { linkedBy: 'existing_link', providerLogin: 'mona-renamed' } });
  });

  test('case 2: a verified GitHub email links to the verified local user of that email, password untouched; other sessions end and the owner is told', async () => {
    const registered = await t.request('POST', '/api/auth/register', { json: { email: 'linked@example.com', password: STRONG_PASSWORD } });
    expect(registered.status).toBe(201);
    const earlierSession = cookieFrom(registered, SESSION);
    const local = (await t.gatehouse.stores.users.findUserByEmail('linked@example.com'))!;
    await t.gatehouse.stores.users.markEmailVerified(local.id);

    gitHubUser('linked', [{ email: 'LINKED@example.com', primary: true, verified: true }]);
    const signedIn = await signIn('linked');
    const { user } = await sessionOf(signedIn);
    expect(user.id).toBe(local.id);
    expect(await t.gatehouse.stores.accounts.listUserAccounts(local.id)).toHaveLength(1);
    expect((await events())[0]).toMatchObject({ type: 'login_success', userId: local.id, metadata: { linkedBy: 'verified_email' } });
    // A new way into the account: every other session ended, this one works, the owner is told.
    expect((await t.request('GET', '/api/auth/session', { cookie: earlierSession })).status).toBe(401);
    expect((await t.request('GET', '/api/auth/session', { cookie: cookieFrom(signedIn, SESSION) })).status).toBe(200);
    expect((await events()).find((e) => e.type === 'config_updated')).toMatchObject({
      userId: local.id,
      metadata: { action: 'provider_linked_to_existing_account', provider: 'github', providerLogin: 'linked', sessionsRevoked: 1, ownerNotified: true },
    });
    await t.gatehouse.deliverQueuedEmails();
    const notice = t.sentEmails.find((email) => email.subject.includes('was linked'))!;
    expect(notice.to).toBe('linked@example.com');
    expect(notice.text).toContain('"linked"');
    expect(notice.text).toContain('http://localhost:3000/forgot-password');
    expect((await t.request('POST', '/api/auth/login', { json: { email: 'linked@example.com', password: STRONG_PASSWORD } })).status).toBe(200);
  });

  test('pre-hijacking defence: linking to a never-verified local account removes its password and revokes its sessions', async () => {
    // The attacker registers the victim's address first and keeps a session.
    const squatter = await t.request('POST', '/api/auth/register', { json: { email: 'victim@example.com', password: STRONG_PASSWORD } });
    expect(squatter.status).toBe(201);
    const squatterCookie = cookieFrom(squatter, SESSION);
    const local = (await t.gatehouse.stores.users.findUserByEmail('victim@example.com'))!;

    gitHubUser('victim', [{ email: 'victim@example.com', primary: true, verified: true }]);
    const { user } = await sessionOf(await signIn('victim'));
    expect(user).toMatchObject({ id: local.id, emailVerified: true });

    expect((await t.request('GET', '/api/auth/session', { cookie: squatterCookie })).status).toBe(401);
    expect((await t.request('POST', '/api/auth/login', { json: { email: 'victim@example.com', password: STRONG_PASSWORD } })).status).toBe(401);
    expect((await t.gatehouse.stores.users.findUserById(local.id))!.passwordHash).toBeNull();
    const secured = (await events()).find((e) => e.type === 'config_updated')!;
    expect(secured).toMatchObject({
      userId: local.id,
      metadata: { action: 'unverified_account_secured_for_provider_link', provider: 'github', passwordRemoved: true, sessionsRevoked: 1 },
    });
  });

  test('an email GitHub has not verified links nothing: a new user without an email is created', async () => {
    expect((await t.request('POST', '/api/auth/register', { json: { email: 'unverified@example.com', password: STRONG_PASSWORD } })).status).toBe(201);
    const local = (await t.gatehouse.stores.users.findUserByEmail('unverified@example.com'))!;
    await t.gatehouse.stores.users.markEmailVerified(local.id);

    gitHubUser('unverified', [{ email: 'unverified@example.com', primary: true, verified: false }]);
    const { user } = await sessionOf(await signIn('unverified'));
    expect(user.id).not.toBe(local.id);
    expect(user).toMatchObject({ email: null, emailVerified: false });
    expect(await t.gatehouse.stores.accounts.listUserAccounts(local.id)).toEqual([]);
    expect((await t.request('POST', '/api/auth/login', { json: { email: 'unverified@example.com', password: STRONG_PASSWORD } })).status).toBe(200);
  });

  test('a GitHub user without any email address gets a user without an email', async () => {
    gitHubUser('noemail', []);
    const { user } = await sessionOf(await signIn('noemail'));
    expect(user).toMatchObject({ email: null, emailVerified: false });
  });

  test('two simultaneous callbacks for one new GitHub account: both succeed, one user, one link', async () => {
    const octo = gitHubUser('racer', []);
    const [a, b] = await Promise.all([start(), start()]);
    const [backA, backB] = await Promise.all([fake.authorize(a.location, { login: 'racer' }), fake.authorize(b.location, { login: 'racer' })]);
    const [first, second] = await Promise.all([callback(backA, a.cookie), callback(backB, b.cookie)]);
    expect([first.status, second.status]).toEqual([302, 302]);
    expect(first.headers.get('location')).toBe('/dashboard');
    expect(second.headers.get('location')).toBe('/dashboard');
    const ids = [(await sessionOf(first)).user.id, (await sessionOf(second)).user.id];
    expect(ids[0]).toBe(ids[1]);
    const account = await t.gatehouse.stores.accounts.findAccount('github', String(octo.id));
    expect(account?.userId).toBe(ids[0]);
    const users = await t.database.kysely.selectFrom('users').select('id').execute();
    expect(users).toHaveLength(1);
  });

  test.each([
    '//evil.example/path',
    '/\\evil.example',
    'https://evil.example/',
    'http://localhost:3000/dashboard',
    'javascript:alert(1)',
    '/\t/evil.example',
    'evil.example',
  ])('return_to %j is not followed: the sign-in lands on DEFAULT_RETURN_TO', async (returnTo) => {
    const { login } = gitHubUser(`redirect${nextGitHubId}`);
    const response = await signIn(login, returnTo);
    expect(response.status).toBe(302);
    expect(response.headers.get('location')).toBe('/dashboard');
  });

  test('a provider error (the user cancels) lands on the login page with error=oauth_error and is audited', async () => {
    const started = await start();
    const response = await callback(await fake.authorize(started.location, { deny: true }), started.cookie);
    const { error, message } = loginPageError(response);
    expect(error).toBe('oauth_error');
    expect(message).toMatch(/cancelled/);
    expectPendingCookieCleared(response);
    expect(cookieFrom(response, SESSION)).toBeUndefined();
    expect(await lastFailure()).toMatchObject({ userId: null, metadata: { provider: 'github', error: 'oauth_error', providerError: 'access_denied' } });
  });

  test('another provider error code is named in the message, as plain text', async () => {
    const started = await start();
    const state = new URL(started.location).searchParams.get('state')!;
    const url = new URL(
      `http://localhost:3000/api/auth/callback/github?error=redirect_uri_mismatch&error_description=${encodeURIComponent('The redirect_uri\r\nMUST match.')}&state=${state}`,
    );
    const { error, message } = loginPageError(await callback(url, started.cookie));
    expect(error).toBe('oauth_error');
    expect(message).toBe('GitHub reported an error (redirect_uri_mismatch): The redirect_uri MUST match.');
  });

  test('invalid_state: no pending cookie, another state, a forged cookie or another flow — each a security event', async () => {
    gitHubUser('csrf');
    const started = await start();
    const back = await fake.authorize(started.location, { login: 'csrf' });
    const otherFlow = await start();
    const [payload] = started.cookie.split('=')[1]!.split('.');
    const forgedCookie = `${started.cookie.split('=')[0]}=${payload}.${Buffer.alloc(32).toString('base64url')}`;
    const wrongState = new URL(back);
    wrongState.searchParams.set('state', 'attacker-chosen-state');
    const noState = new URL(back);
    noState.searchParams.delete('state');

    // The pending cookie is looked up by the callback's state: a state no sign-in in this browser
    // started finds none.
    const attempts: [URL, string | undefined, string][] = [
      [back, undefined, 'missing'],
      [wrongState, started.cookie, 'missing'],
      [noState, started.cookie, 'missing'],
      [back, forgedCookie, 'bad_signature'],
      [back, otherFlow.cookie, 'missing'],
    ];
    for (const [url, cookie, reason] of attempts) {
      const response = await callback(url, cookie);
      expect(loginPageError(response).error).toBe('invalid_state');
      expect(await lastFailure()).toMatchObject({ type: 'login_failure', metadata: { provider: 'github', error: 'invalid_state', reason, security: true } });
      // Only a cookie the callback's state names is cleared: a stray callback ends no other sign-in.
      const cleared = response.headers.getSetCookie().filter((header) => header.startsWith(`${PENDING}_`));
      expect(cleared, reason).toEqual(cookie === forgedCookie ? [expect.stringMatching(/Max-Age=0/)] : []);
    }
    // No code was spent on a refused state: the real flow still completes.
    expect((await callback(back, started.cookie)).headers.get('location')).toBe('/dashboard');
  });

  test('two sign-ins in two tabs do not break each other: each has its own pending cookie, finished in either order', async () => {
    gitHubUser('tabs');
    const first = await start('/first');
    const second = await start('/second');
    expect(first.cookie.split('=')[0]).not.toBe(second.cookie.split('=')[0]);
    // The browser sends both cookies with each callback, as it would.
    const both = `${first.cookie}; ${second.cookie}`;
    const backSecond = await fake.authorize(second.location, { login: 'tabs' });
    const backFirst = await fake.authorize(first.location, { login: 'tabs' });
    const finishedSecond = await callback(backSecond, both);
    expect(finishedSecond.headers.get('location')).toBe('/second');
    // Only the second sign-in's cookie was cleared.
    expect(setCookieHeader(finishedSecond, second.cookie.split('=')[0]!)).toMatch(/Max-Age=0/);
    expect(setCookieHeader(finishedSecond, first.cookie.split('=')[0]!)).toBeUndefined();
    const finishedFirst = await callback(backFirst, first.cookie);
    expect(finishedFirst.headers.get('location')).toBe('/first');
  });

  test('at most three sign-ins in progress per browser: starting a fourth drops the oldest pending cookie', async () => {
    const jar: string[] = [];
    const starts: Response[] = [];
    for (let i = 0; i < 4; i += 1) {
      const response = await t.request('GET', '/api/auth/oauth/github', { cookie: jar.join('; ') });
      starts.push(response);
      for (const header of response.headers.getSetCookie()) {
        const pair = header.split(';')[0]!;
        const name = pair.split('=')[0]!;
        const at = jar.findIndex((cookie) => cookie.startsWith(`${name}=`));
        if (at !== -1) jar.splice(at, 1);
        if (!/Max-Age=0/.test(header)) jar.push(pair);
      }
    }
    expect(jar.filter((cookie) => cookie.startsWith(`${PENDING}_`))).toHaveLength(3);
    const oldest = pendingNameOf(starts[0]!);
    expect(setCookieHeader(starts[3]!, oldest)).toMatch(/Max-Age=0/);
    expect(jar.some((cookie) => cookie.startsWith(`${oldest}=`))).toBe(false);
  });

  test('the flow expires after 10 minutes on the injected clock', async () => {
    gitHubUser('slow');
    const late = await start();
    const backLate = await fake.authorize(late.location, { login: 'slow' });
    const inTime = await start();
    const backInTime = await fake.authorize(inTime.location, { login: 'slow' });

    t.clock.advance(10 * 60_000 - 1000);
    expect((await callback(backInTime, inTime.cookie)).headers.get('location')).toBe('/dashboard');
    t.clock.advance(1000);
    const { error, message } = loginPageError(await callback(backLate, late.cookie));
    expect(error).toBe('invalid_state');
    expect(message).toMatch(/10 minutes/);
    expect(await lastFailure()).toMatchObject({ metadata: { error: 'invalid_state', reason: 'expired', security: true } });
  });

  test('replaying a completed callback (same code, same cookie) fails before any code exchange: a pending sign-in is used once', async () => {
    gitHubUser('replay');
    const started = await start();
    const back = await fake.authorize(started.location, { login: 'replay' });
    expect((await callback(back, started.cookie)).headers.get('location')).toBe('/dashboard');
    const before = fake.requests.length;
    const replay = await callback(back, started.cookie);
    expect(loginPageError(replay).error).toBe('invalid_state');
    expect(cookieFrom(replay, SESSION)).toBeUndefined();
    expect(fake.requests.length).toBe(before);
    expect(await lastFailure()).toMatchObject({ metadata: { error: 'invalid_state', reason: 'replayed', security: true } });
  });

  test("PKCE stops an injected code: a code issued for another flow fails even with this flow's valid state", async () => {
    gitHubUser('victim2');
    const victim = await start();
    const attacker = await start();
    const attackerBack = await fake.authorize(attacker.location, { login: 'victim2' });
    const injected = new URL(attackerBack);
    injected.searchParams.set('state', new URL(victim.location).searchParams.get('state')!);
    expect(loginPageError(await callback(injected, victim.cookie)).error).toBe('oauth_failed');
    expect(await lastFailure()).toMatchObject({ metadata: { reason: 'code_exchange', detail: 'bad_verification_code' } });
  });

  test('a repeated state, code or error is refused, never first-value-wins: no code exchange is made', async () => {
    gitHubUser('twice');
    for (const [name, expected, reason] of [
      ['state', 'invalid_state', 'state_repeated'],
      ['code', 'oauth_failed', 'repeated_parameter'],
      ['error', 'oauth_failed', 'repeated_parameter'],
    ] as const) {
      const started = await start();
      const back = await fake.authorize(started.location, { login: 'twice' });
      // The genuine value first, a planted one after it (the provider's error: two of them).
      if (name === 'error') back.searchParams.append('error', 'server_error');
      back.searchParams.append(name, name === 'error' ? 'access_denied' : 'planted');
      const exchangesBefore = fake.requests.filter((request) => request.path === '/login/oauth/access_token').length;
      const response = await callback(back, started.cookie);
      expect(loginPageError(response).error, name).toBe(expected);
      expect(cookieFrom(response, SESSION), name).toBeUndefined();
      expect(fake.requests.filter((request) => request.path === '/login/oauth/access_token').length, name).toBe(exchangesBefore);
      expect((await lastFailure()).metadata, name).toMatchObject({ reason });
    }
  });

  test('a repeated return_to at the start is refused with 400, not first-value-wins', async () => {
    const response = await t.request('GET', '/api/auth/oauth/github?return_to=%2Fdashboard&return_to=%2Fsettings');
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ error: 'validation_error', issues: [{ path: 'return_to' }] });
    expect(response.headers.getSetCookie().some((header) => header.startsWith(PENDING))).toBe(false);
  });

  test('a callback without a code answers oauth_failed', async () => {
    const started = await start();
    const url = new URL(`http://localhost:3000/api/auth/callback/github?state=${new URL(started.location).searchParams.get('state')}`);
    expect(loginPageError(await callback(url, started.cookie)).error).toBe('oauth_failed');
    expect(await lastFailure()).toMatchObject({ metadata: { reason: 'missing_code' } });
  });

  test.each([
    ['/login/oauth/access_token', 'error500', 'code_exchange', 'http_500'],
    ['/login/oauth/access_token', 'hang', 'code_exchange', 'timeout'],
    ['/login/oauth/access_token', 'not_json', 'code_exchange', 'http_200'],
    ['/user', 'error500', 'profile_fetch', 'http_500'],
    ['/user', 'not_json', 'profile_fetch', 'http_200'],
    ['/user/emails', 'hang', 'profile_fetch', 'timeout'],
    ['/login/oauth/access_token', 'huge', 'code_exchange', 'response_too_large'],
    ['/user/emails', 'huge', 'profile_fetch', 'response_too_large'],
  ] as const)('GitHub failing at %s (%s) lands on error=oauth_failed, audited as %s/%s, no secret in the message', async (path, failure, reason, detail) => {
    const { login } = gitHubUser(`fail${nextGitHubId}`);
    const started = await start();
    const back = await fake.authorize(started.location, { login });
    fake.failNext(path, failure);
    const response = await callback(back, started.cookie);
    const { error, message } = loginPageError(response);
    expect(error).toBe('oauth_failed');
    expect(message).toContain(detail);
    expect(message).not.toContain(back.searchParams.get('code')!);
    expect(message).not.toContain(fake.clientSecret);
    for (const issued of fake.issuedTokens) expect(message).not.toContain(issued);
    expectPendingCookieCleared(response);
    expect(cookieFrom(response, SESSION)).toBeUndefined();
    expect(await lastFailure()).toMatchObject({ userId: null, metadata: { provider: 'github', error: 'oauth_failed', reason, detail } });
    expect(await t.database.kysely.selectFrom('accounts').selectAll().execute()).toEqual([]);
  });

  test('wrong client credentials (HTTP 200 + error from GitHub) answer oauth_failed', async () => {
    await t.close();
    t = await open(oauthEnv({ GITHUB_CLIENT_SECRET: 'not-the-secret' }));
    gitHubUser('creds');
    const started = await start();
    const response = await callback(await fake.authorize(started.location, { login: 'creds' }), started.cookie);
    const { error, message } = loginPageError(response);
    expect(error).toBe('oauth_failed');
    expect(message).toContain('incorrect_client_credentials');
    expect(message).not.toContain('not-the-secret');
  });

  test('the database never holds a plain provider token, code or client secret; the stored envelopes open to them', async () => {
    fake.expiringTokens = true;
    gitHubUser('scan');
    const started = await start();
    const back = await fake.authorize(started.location, { login: 'scan' });
    const response = await callback(back, started.cookie);
    const { user } = await sessionOf(response);
    const [account] = await t.gatehouse.stores.accounts.listUserAccounts(user.id);
    const [accessToken, refreshToken] = fake.issuedTokens.slice(-2);
    expect(account!.accessTokenExpiresAt).toEqual(new Date(t.clock.now().getTime() + 28800 * 1000));

    const dump = await dumpDatabase();
    for (const secret of [
      accessToken!,
      refreshToken!,
      back.searchParams.get('code')!,
      fake.clientSecret,
      AUTH_SECRET,
      cookieFrom(response, SESSION)!.split('=')[1]!,
    ]) {
      expect(dump).not.toContain(secret);
    }
    const envelope = createEnvelope([KEY]);
    expect(envelope.open(account!.accessTokenEnc, `${account!.id}.access_token`)).toBe(accessToken);
    expect(envelope.open(account!.refreshTokenEnc!, `${account!.id}.refresh_token`)).toBe(refreshToken);
  });

  test('a rotated key still opens tokens sealed under the old one; new tokens use the new key', async () => {
    gitHubUser('rotate');
    const { user } = await sessionOf(await signIn('rotate'));
    const [before] = await t.gatehouse.stores.accounts.listUserAccounts(user.id);
    // The same database behind a second instance whose key list has a new key in front.
    const newKey = randomBytes(32);
    const rotatedInstance = await createGatehouse(
      loadConfig({ ...baseTestEnv(), ...oauthEnv({ ENCRYPTION_KEY_BASE64: `${newKey.toString('base64')},${KEY.toString('base64')}` }) }),
      { clock: t.clock, database: t.database, logger: createLogger({ level: 'silent' }), providerHTTP: { timeoutMs: PROVIDER_TIMEOUT_MS } },
    );
    const rotated = createEnvelope([newKey, KEY]);
    expect(rotated.open(before!.accessTokenEnc, `${before!.id}.access_token`)).not.toBeNull();
    const started = await rotatedInstance.fetch(new Request('http://localhost:3000/api/auth/oauth/github'));
    const back = await fake.authorize(started.headers.get('location')!, { login: 'rotate' });
    const response = await rotatedInstance.fetch(new Request(back, { headers: { cookie: cookieFrom(started, pendingNameOf(started))! } }));
    expect(response.headers.get('location')).toBe('/dashboard');
    const [after] = await t.gatehouse.stores.accounts.listUserAccounts(user.id);
    expect(after!.id).toBe(before!.id);
    expect(createEnvelope([newKey]).open(after!.accessTokenEnc, `${after!.id}.access_token`)).toBe(fake.issuedTokens.at(-1));
  });

  test('in production the pending cookie is Secure and __Host- prefixed', async () => {
    await t.close();
    t = await open(oauthEnv({ NODE_ENV: 'production', BASE_URL: 'https://auth.example.com', BCRYPT_ROUNDS: '10', METRICS_PUBLIC: 'true' }));
    const response = await t.request('GET', '/api/auth/oauth/github');
    const header = setCookieHeader(response, pendingNameOf(response))!;
    expect(header).toMatch(/^__Host-gatehouse_oauth_[0-9a-f]{16}=/);
    expect(header).toMatch(/; Secure/);
    expect(header).toMatch(/; HttpOnly/);
    expect(header).toMatch(/; Path=\//);
  });

  test.each([
    ['GITHUB_CLIENT_ID', { GITHUB_CLIENT_ID: '' }],
    ['GITHUB_CLIENT_SECRET', { GITHUB_CLIENT_SECRET: '' }],
    ['AUTH_SECRET', { AUTH_SECRET: 'short' }],
    ['ENCRYPTION_KEY_BASE64', { ENCRYPTION_KEY_BASE64: Buffer.alloc(16).toString('base64') }],
  ])('without a usable %s the flow answers 503 provider_not_configured naming it; the rest works', async (variable, env) => {
    await t.close();
    t = await open(oauthEnv(env));
    for (const path of ['/api/auth/oauth/github', '/api/auth/callback/github?code=x&state=y']) {
      const response = await t.request('GET', path);
      expect(response.status).toBe(503);
      const body = (await response.json()) as { error: string; message: string };
      expect(body.error).toBe('provider_not_configured');
      expect(body.message).toContain(variable);
      expect(body.message).not.toContain(fake.clientSecret);
    }
    expect((await t.request('POST', '/api/auth/register', { json: { email: 'still@example.com', password: STRONG_PASSWORD } })).status).toBe(201);
  });
});
