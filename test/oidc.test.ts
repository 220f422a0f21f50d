/**
 * Sign in with an OpenID Connect provider, end to end against a real OpenID Provider on loopback
 * (panva's oidc-provider 8, support/oidc-provider.ts) with its own keys, on every available
 * database: discovery, the authorization request, the code exchange with PKCE and
 * client_secret_basic, the ID token checked against the JWKS, userinfo, linking, tokens at rest.
 * The refusals (forged and broken ID tokens) and an issuer that is down are in
 * test/oidc-refusals.test.ts.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, afterEach, beforeAll, beforeEach, expect, test } from 'vitest';
import type { AuditEvent } from '../src/audit/audit-log.js';
import { createEnvelope } from '../src/crypto/envelope.js';
import { createCodeChallenge } from '../src/oauth/pkce.js';
import { startOidcProvider, type OidcTestAccount, type RealOidcProvider } from './support/oidc-provider.js';
import { STRONG_PASSWORD, cookieFrom, createTestGatehouse, describeEachDialect, setCookieHeader, type Dialect, type TestGatehouse } from './support/harness.js';

const BASE_URL = 'http://localhost:3000';
const SESSION = 'gatehouse_session';
const KEY = randomBytes(32);

/** `acme` follows OpenID Connect Core §5.4 (email only from userinfo); `corp` puts it in the ID token. */
let acme: RealOidcProvider;
let corp: RealOidcProvider;
beforeAll(async () => {
  acme = await startOidcProvider({ redirectUris: [`${BASE_URL}/api/auth/callback/acme`] });
  corp = await startOidcProvider({ redirectUris: [`${BASE_URL}/api/auth/callback/corp`], claimsInIdToken: true });
});
afterAll(async () => {
  await acme?.close();
  await corp?.close();
});

function oidcEnv(): Record<string, string> {
  return {
    OIDC_PROVIDERS: 'acme,corp',
    OIDC_ACME_ISSUER: acme.issuer,
    OIDC_ACME_CLIENT_ID: acme.clientId,
    OIDC_ACME_CLIENT_SECRET: acme.clientSecret,
    OIDC_ACME_NAME: 'Acme SSO',
    // Issuers of our own: their word on an email counts only when trusted (the default is not to).
    OIDC_ACME_TRUST_EMAIL: 'true',
    OIDC_CORP_ISSUER: corp.issuer,
    OIDC_CORP_CLIENT_ID: corp.clientId,
    OIDC_CORP_CLIENT_SECRET: corp.clientSecret,
    OIDC_CORP_TRUST_EMAIL: 'true',
    AUTH_SECRET: 'test-auth-secret-0123456789',
    ENCRYPTION_KEY_BASE64: KEY.toString('base64'),
  };
}

let nextSub = 1;
function account(label: string, overrides: Partial<OidcTestAccount> = {}): OidcTestAccount {
  return {
    sub: `${label}-${(nextSub += 1)}`,
    email: `${label}@example.com`,
    email_verified: true,
    name: `The ${label}`,
    preferred_username: label,
    ...overrides,
  };
}

describeEachDialect('Sign in with OpenID Connect (oidc-provider)', (dialect: Dialect) => {
  let t: TestGatehouse;

  beforeEach(async () => {
    t = await createTestGatehouse(dialect, { env: oidcEnv(), overrides: { providerHTTP: { timeoutMs: 2000 } } });
  });
  afterEach(async () => {
    await t.close();
  });

  const pendingCookie = (response: Response): string =>
    response.headers
      .getSetCookie()
      .map((header) => header.split(';')[0]!)
      .find((pair) => pair.startsWith('gatehouse_oauth_'))!;
  const start = async (id: string, returnTo?: string) => {
    const query = returnTo === undefined ? '' : `?return_to=${encodeURIComponent(returnTo)}`;
    const response = await t.request('GET', `/api/auth/oauth/${id}${query}`);
    expect(response.status).toBe(302);
    return { location: response.headers.get('location')!, cookie: pendingCookie(response) };
  };
  const callback = (url: URL, cookie: string) => t.request('GET', `${url.pathname}${url.search}`, { cookie });
  const signIn = async (provider: RealOidcProvider, id: string, who: OidcTestAccount, returnTo?: string) => {
    const started = await start(id, returnTo);
    return callback(await provider.authorize(started.location, who), started.cookie);
  };
  const sessionOf = async (response: Response) => {
    expect(response.status).toBe(302);
    const answer = await t.request('GET', '/api/auth/session', { cookie: cookieFrom(response, SESSION) });
    expect(answer.status).toBe(200);
    return (await answer.json()) as { user: { id: string; email: string | null; emailVerified: boolean } };
  };
  const events = (): Promise<AuditEvent[]> => t.gatehouse.stores.audit.listRecentEvents(50);

  test('GET /oauth/<id> redirects to the discovered authorization endpoint with scope, state, nonce and an S256 challenge', async () => {
    const { location, cookie } = await start('acme');
    const url = new URL(location);
    expect(url.origin).toBe(acme.issuer);
    expect(url.pathname).toBe('/auth');
    expect(Object.fromEntries(url.searchParams)).toMatchObject({
      client_id: acme.clientId,
      response_type: 'code',
      redirect_uri: `${BASE_URL}/api/auth/callback/acme`,
      scope: 'openid email profile',
      code_challenge_method: 'S256',
    });
    const state = url.searchParams.get('state')!;
    const nonce = url.searchParams.get('nonce')!;
    expect(state).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(nonce).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(nonce).not.toBe(state);
    // The signed pending sign-in holds this state and this nonce; the verifier behind the challenge
    // only sealed (test/oauth.test.ts reads the verifier GitHub receives and looks for it in the cookie).
    const payload = JSON.parse(Buffer.from(cookie.split('=')[1]!.split('.')[0]!, 'base64url').toString()) as { p: string; s: string; n: string; c: string };
    expect(payload).toMatchObject({ p: 'acme', s: state, n: nonce });
    expect(payload.c).toMatch(/^v1\./);
    expect(createCodeChallenge(payload.c)).not.toBe(url.searchParams.get('code_challenge'));
  });

  test('a new person signs in: ID token verified, email read from userinfo, a verified user, an encrypted token that works', async () => {
    const who = account('ada');
    const before = acme.requests.length;
    const response = await signIn(acme, 'acme', who, '/settings');
    expect(response.headers.get('location')).toBe('/settings');
    expect(setCookieHeader(response, SESSION)).toMatch(/; HttpOnly/);
    const { user } = await sessionOf(response);
    expect(user).toMatchObject({ email: 'ada@example.com', emailVerified: true });

    // acme's ID token carries no email (Core §5.4): Gatehouse asked the userinfo endpoint.
    const seen = acme.requests.slice(before);
    expect(seen).toEqual(expect.arrayContaining(['/token', '/jwks', '/me']));

    const [linked] = await t.gatehouse.stores.accounts.listUserAccounts(user.id);
    expect(linked).toMatchObject({ provider: 'acme', providerAccountId: who.sub, providerLogin: 'ada', refreshTokenEnc: null });
    expect(linked!.scope.split(' ').sort()).toEqual(['email', 'openid', 'profile']);
    expect(linked!.accessTokenExpiresAt!.getTime()).toBeGreaterThan(t.clock.now().getTime());
    // The stored envelope opens to the very access token the provider issued: it still reads
    // the profile at the provider. The database itself never holds it in clear.
    const accessToken = createEnvelope([KEY]).open(linked!.accessTokenEnc, `${linked!.id}.access_token`)!;
    const me = await fetch(`${acme.issuer}/me`, { headers: { authorization: `Bearer ${accessToken}` } });
    expect(me.status).toBe(200);
    expect(await me.json()).toMatchObject({ sub: who.sub, email: 'ada@example.com' });
    const tables = await Promise.all(
      (['users', 'sessions', 'audit_events', 'accounts'] as const).map((table) => t.database.kysely.selectFrom(table).selectAll().execute()),
    );
    const dump = JSON.stringify(tables);
    expect(dump).not.toContain(accessToken);
    expect(dump).not.toContain(acme.clientSecret);

    const [success, created] = await events();
    expect(created).toMatchObject({ type: 'user_created', userId: user.id, metadata: { method: 'oauth', provider: 'acme', providerUserId: who.sub } });
    expect(success).toMatchObject({ type: 'login_success', userId: user.id, metadata: { method: 'oauth', provider: 'acme', linkedBy: 'new_user' } });
  });

  test('a provider that puts the email in the ID token is not asked for userinfo', async () => {
    const before = corp.requests.length;
    const { user } = await sessionOf(await signIn(corp, 'corp', account('grace')));
    expect(user).toMatchObject({ email: 'grace@example.com', emailVerified: true });
    const seen = corp.requests.slice(before);
    expect(seen).toContain('/token');
    expect(seen).not.toContain('/me');
  });

  test('the same person again: the existing link signs in the same user and refreshes the stored token', async () => {
    const who = account('linus');
    const first = await sessionOf(await signIn(acme, 'acme', who));
    const [before] = await t.gatehouse.stores.accounts.listUserAccounts(first.user.id);
    t.clock.advance(60_000);
    const second = await sessionOf(await signIn(acme, 'acme', { ...who, preferred_username: 'linus-renamed' }));
    expect(second.user.id).toBe(first.user.id);
    const accounts = await t.gatehouse.stores.accounts.listUserAccounts(first.user.id);
    expect(accounts).toHaveLength(1);
    expect(accounts[0]!.providerLogin).toBe('linus-renamed');
    expect(accounts[0]!.accessTokenEnc).not.toBe(before!.accessTokenEnc);
    expect((await events())[0]).toMatchObject({ type: 'login_success', metadata: { linkedBy: 'existing_link' } });
  });

  test('the same subject at two providers is two identities: each provider keys its own accounts', async () => {
    const shared = { sub: `same-sub-${(nextSub += 1)}`, email_verified: false };
    const atAcme = await sessionOf(await signIn(acme, 'acme', { ...shared, email: 'one@example.com' }));
    const atCorp = await sessionOf(await signIn(corp, 'corp', { ...shared, email: 'two@example.com' }));
    expect(atCorp.user.id).not.toBe(atAcme.user.id);
  });

  test('email_verified: true links to the local user of that email; the owner is told and other sessions end', async () => {
    const email = 'verified-owner@example.com';
    const registered = await t.request('POST', '/api/auth/register', { json: { email, password: STRONG_PASSWORD } });
    const { verificationToken } = (await registered.json()) as { verificationToken?: string };
    const localSession = cookieFrom(registered, SESSION)!;
    await t.gatehouse.stores.users.markEmailVerified((await t.gatehouse.stores.users.findUserByEmail(email))!.id);
    expect(verificationToken).toBeUndefined();

    const { user } = await sessionOf(await signIn(corp, 'corp', account('owner', { email })));
    const local = (await t.gatehouse.stores.users.findUserByEmail(email))!;
    expect(user.id).toBe(local.id);
    expect(local.passwordHash).not.toBeNull();
    expect((await t.request('GET', '/api/auth/session', { cookie: localSession })).status).toBe(401);
    await t.gatehouse.deliverQueuedEmails();
    expect(t.sentEmails.map((sent) => sent.to)).toContain(email);
    expect((await events())[0]).toMatchObject({ type: 'login_success', metadata: { provider: 'corp', linkedBy: 'verified_email' } });
  });

  test('pre-hijacking defence: linking to a never-verified local account removes its password and revokes its sessions', async () => {
    const email = 'squatted@example.com';
    const registered = await t.request('POST', '/api/auth/register', { json: { email, password: STRONG_PASSWORD } });
    const squatterSession = cookieFrom(registered, SESSION)!;
    const { user } = await sessionOf(await signIn(acme, 'acme', account('victim', { email })));
    const local = (await t.gatehouse.stores.users.findUserByEmail(email))!;
    expect(user.id).toBe(local.id);
    expect(local).toMatchObject({ passwordHash: null, emailVerified: true });
    expect((await t.request('GET', '/api/auth/session', { cookie: squatterSession })).status).toBe(401);
    const login = await t.request('POST', '/api/auth/login', { json: { email, password: STRONG_PASSWORD } });
    expect(login.status).toBe(401);
  });

  test('email_verified: false links nothing: a new user without an email, the local account untouched', async () => {
    const email = 'someone-elses@example.com';
    await t.request('POST', '/api/auth/register', { json: { email, password: STRONG_PASSWORD } });
    const { user } = await sessionOf(await signIn(acme, 'acme', account('claimer', { email, email_verified: false })));
    const local = (await t.gatehouse.stores.users.findUserByEmail(email))!;
    expect(user.id).not.toBe(local.id);
    expect(user).toMatchObject({ email: null, emailVerified: false });
    expect(local.passwordHash).not.toBeNull();
  });

  test('an issuer of our own without OIDC_<ID>_TRUST_EMAIL: its verified email links nothing and claims no address', async () => {
    await t.close();
    t = await createTestGatehouse(dialect, { env: { ...oidcEnv(), OIDC_ACME_TRUST_EMAIL: '' }, overrides: { providerHTTP: { timeoutMs: 2000 } } });
    const email = 'untrusted-owner@example.com';
    const registered = await t.request('POST', '/api/auth/register', { json: { email, password: STRONG_PASSWORD } });
    const localSession = cookieFrom(registered, SESSION)!;
    const local = (await t.gatehouse.stores.users.findUserByEmail(email))!;
    await t.gatehouse.stores.users.markEmailVerified(local.id);

    const { user } = await sessionOf(await signIn(acme, 'acme', account('untrusted', { email })));
    expect(user.id).not.toBe(local.id);
    expect(user).toMatchObject({ email: null, emailVerified: false });
    // The local account is untouched: no link, its password and session still work, nothing removed.
    expect(await t.gatehouse.stores.accounts.listUserAccounts(local.id)).toEqual([]);
    expect((await t.request('GET', '/api/auth/session', { cookie: localSession })).status).toBe(200);
    expect((await t.request('POST', '/api/auth/login', { json: { email, password: STRONG_PASSWORD } })).status).toBe(200);
    expect((await events()).some((event) => String(event.metadata.action ?? '').includes('provider'))).toBe(false);

    // A never-verified local account is not secured on an untrusted word either.
    const squatted = 'untrusted-squatted@example.com';
    const squatter = cookieFrom(await t.request('POST', '/api/auth/register', { json: { email: squatted, password: STRONG_PASSWORD } }), SESSION)!;
    await sessionOf(await signIn(acme, 'acme', account('untrusted2', { email: squatted })));
    expect((await t.request('GET', '/api/auth/session', { cookie: squatter })).status).toBe(200);
    expect((await t.gatehouse.stores.users.findUserByEmail(squatted))!.passwordHash).not.toBeNull();

    // A new person's address is not claimed: whoever owns it can still register it.
    const fresh = 'untrusted-new@example.com';
    expect((await sessionOf(await signIn(acme, 'acme', account('untrusted3', { email: fresh })))).user.email).toBeNull();
    expect((await t.request('POST', '/api/auth/register', { json: { email: fresh, password: STRONG_PASSWORD } })).status).toBe(201);

    // corp is trusted (OIDC_CORP_TRUST_EMAIL=true): the same kind of sign-in links there.
    const trusted = await sessionOf(await signIn(corp, 'corp', account('trusted', { email })));
    expect(trusted.user.id).toBe(local.id);
  });

  test('a missing email_verified is not a yes: no link, no email stored', async () => {
    const { user } = await sessionOf(
      await signIn(corp, 'corp', { sub: `no-flag-${(nextSub += 1)}`, email: 'noflag@example.com', preferred_username: 'noflag' }),
    );
    expect(user).toMatchObject({ email: null, emailVerified: false });
  });

  test('discovery is fetched once and reused; another day on the injected clock fetches it again', async () => {
    const count = () => acme.requests.filter((path) => path === '/.well-known/openid-configuration').length;
    const before = count();
    await start('acme');
    await start('acme');
    await sessionOf(await signIn(acme, 'acme', account('cache')));
    expect(count() - before).toBe(1);
    t.clock.advance(24 * 3600 * 1000);
    await start('acme');
    expect(count() - before).toBe(2);
  });

  test('GET /providers lists the usable providers with their names; /login has a button for each', async () => {
    const answer = await t.request('GET', '/api/auth/providers');
    expect(answer.status).toBe(200);
    expect(await answer.json()).toEqual({
      providers: [
        { id: 'acme', name: 'Acme SSO' },
        { id: 'corp', name: 'corp' },
      ],
    });
    const page = await (await t.request('GET', '/login?return_to=%2Fsettings')).text();
    expect(page).toContain('id="acme-sign-in" href="/api/auth/oauth/acme?return_to=%2Fsettings">Sign in with Acme SSO</a>');
    expect(page).toContain('id="corp-sign-in" href="/api/auth/oauth/corp?return_to=%2Fsettings">Sign in with corp</a>');
    // GitHub is not configured here: no button, and its routes still answer 503 naming what to set.
    expect(page).not.toContain('github-sign-in');
    const github = await t.request('GET', '/api/auth/oauth/github');
    expect(github.status).toBe(503);
    expect(await github.json()).toMatchObject({ error: 'provider_not_configured' });
  });

  test('a provider error on the callback lands on the login page naming the provider, with our own sentence', async () => {
    const { location, cookie } = await start('acme');
    const state = new URL(location).searchParams.get('state')!;
    const response = await t.request('GET', `/api/auth/callback/acme?error=access_denied&state=${state}&iss=${encodeURIComponent(acme.issuer)}`, { cookie });
    const url = new URL(response.headers.get('location')!, BASE_URL);
    expect(url.pathname).toBe('/login');
    expect(url.searchParams.get('error')).toBe('oauth_error');
    expect(url.searchParams.get('provider')).toBe('acme');
    const page = await (await t.request('GET', `${url.pathname}${url.search}`)).text();
    expect(page).toContain('Acme SSO did not let you sign in.');
  });
});
