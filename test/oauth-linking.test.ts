/**
 * A provider sign-in whose verified email names an existing account, over HTTP against the
 * GitHub-compatible server on loopback (support/fake-github.ts), on every available database:
 * - an account with two-factor sign-in on is linked, and its other sessions ended, only once the
 *   code step succeeds; a wrong code or an expired challenge links nothing;
 * - the link is a sign-in by a proof of the mailbox: a password chosen before the address was
 *   proved (and not confirmed since from a browser signed in to the account) is removed with
 *   everything set up through it, and the owner is told; a password confirmed that way stays;
 *   an account moved onto the address by a link confirmed outside it loses its provider links.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, afterEach, beforeAll, beforeEach, expect, test } from 'vitest';
import type { AuditEvent } from '../src/audit/audit-log.js';
import { CHALLENGE_LIFETIME_MS } from '../src/mfa/challenge.js';
import { createEnvelope } from '../src/crypto/envelope.js';
import { startFakeGitHub, type FakeGitHub } from './support/fake-github.js';
import { totp } from './support/totp-oracle.js';
import { STRONG_PASSWORD, cookieFrom, createTestGatehouse, describeEachDialect, type Dialect, type TestGatehouse } from './support/harness.js';

const SESSION = 'gatehouse_session';
const CHALLENGE = 'gatehouse_mfa';
const KEY = randomBytes(32);
const SQUATTER_PASSWORD = 'Squatter-Pass-42';

let fake: FakeGitHub;
beforeAll(async () => {
  fake = await startFakeGitHub();
});
afterAll(async () => {
  await fake.close();
});

let nextGitHubId = 50_000;
/** A GitHub user whose primary, verified address is `email`. */
function gitHubUser(login: string, email: string): { id: number; login: string } {
  const user = { id: (nextGitHubId += 1), login, emails: [{ email, primary: true, verified: true }] };
  fake.setUser(user);
  return user;
}

describeEachDialect('Provider sign-in into an existing account', (dialect: Dialect) => {
  let t: TestGatehouse;
  beforeEach(async () => {
    t = await createTestGatehouse(dialect, {
      env: {
        GITHUB_CLIENT_ID: fake.clientId,
        GITHUB_CLIENT_SECRET: fake.clientSecret,
        GITHUB_AUTH_URL: fake.authUrl,
        GITHUB_API_URL: fake.apiUrl,
        AUTH_SECRET: 'test-auth-secret-0123456789',
        ENCRYPTION_KEY_BASE64: KEY.toString('base64'),
        RATE_LIMIT_MFA_VERIFY: '1000/15m',
      },
      overrides: { providerHTTP: { timeoutMs: 2000 } },
    });
  });
  afterEach(async () => {
    await t.close();
  });

  const now = () => t.clock.now().getTime();
  const signIn = async (login: string, returnTo = '/dashboard'): Promise<Response> => {
    const started = await t.request('GET', `/api/auth/oauth/github?return_to=${encodeURIComponent(returnTo)}`);
    expect(started.status).toBe(302);
    const pending = started.headers
      .getSetCookie()
      .map((header) => header.split(';')[0]!)
      .find((pair) => pair.startsWith('gatehouse_oauth_'))!;
    const back = await fake.authorize(started.headers.get('location')!, { login });
    return t.request('GET', `${back.pathname}${back.search}`, { cookie: pending });
  };
  const sessionStatus = async (cookie: string): Promise<number> => (await t.request('GET', '/api/auth/session', { cookie })).status;
  const login = (email: string, password: string) => t.request('POST', '/api/auth/login', { json: { email, password } });
  const events = (): Promise<AuditEvent[]> => t.gatehouse.stores.audit.listRecentEvents(100);
  const actions = async (action: string) => (await events()).filter((event) => event.metadata.action === action);
  const pendingLinks = () => t.database.kysely.selectFrom('oauth_pending_links').selectAll().execute();
  /** The emails delivered so far to `to` whose subject contains `subject`. */
  const delivered = async (to: string, subject: string) => {
    await t.gatehouse.deliverQueuedEmails();
    return t.sentEmails.filter((sent) => sent.to === to && sent.subject.includes(subject));
  };
  /** The token of the last verification email sent to `email`. */
  const verificationToken = async (email: string): Promise<string> => {
    await t.gatehouse.deliverQueuedEmails();
    const sent = t.sentEmails.findLast((email_) => email_.to === email && /verify-email\?token=/.test(email_.text))!;
    return decodeURIComponent(/verify-email\?token=([^\s]+)/.exec(sent.text)![1]!);
  };
  /** POST /verify-email with the token, from a client with `cookie` (a browser signed in to the account) or none. */
  const verifyEmail = async (email: string, cookie?: string) => {
    const answer = await t.request('POST', '/api/auth/verify-email', { json: { token: await verificationToken(email) }, ...(cookie ? { cookie } : {}) });
    expect(answer.status).toBe(200);
  };

  /**
   * `email` registered with a password, verified from its own signed-in browser, two-factor sign-in
   * on; and a session of the owner's signed in with password and code.
   */
  async function ownerWithSecondFactor(email: string): Promise<{ userId: string; secret: string; sessions: string[] }> {
    const registered = await t.request('POST', '/api/auth/register', { json: { email, password: STRONG_PASSWORD } });
    expect(registered.status).toBe(201);
    const first = cookieFrom(registered, SESSION)!;
    await verifyEmail(email, first);
    const setup = await t.request('POST', '/api/auth/2fa/totp/setup', { cookie: first, json: { currentPassword: STRONG_PASSWORD } });
    const { secret } = (await setup.json()) as { secret: string };
    expect((await t.request('POST', '/api/auth/2fa/totp/enable', { cookie: first, json: { code: totp(secret, now()) } })).status).toBe(200);
    t.clock.advance(30_000);
    const challenge = cookieFrom(await login(email, STRONG_PASSWORD), CHALLENGE)!;
    const second = await t.request('POST', '/api/auth/2fa/verify', { cookie: challenge, json: { code: totp(secret, now()) } });
    expect(second.status).toBe(200);
    t.clock.advance(30_000);
    const sessions = [first, cookieFrom(second, SESSION)!];
    for (const cookie of sessions) expect(await sessionStatus(cookie)).toBe(200);
    return { userId: (await t.gatehouse.stores.users.findUserByEmail(email))!.id, secret, sessions };
  }

  test('a 2FA account: the provider sign-in links nothing and ends no session before the code; a wrong code links nothing; the right one links, ends the other sessions and tells the owner', async () => {
    const email = 'two-factor@example.com';
    const { userId, secret, sessions } = await ownerWithSecondFactor(email);
    const octo = gitHubUser('two-factor', email);

    const answered = await signIn('two-factor', '/after');
    expect(answered.status).toBe(302);
    expect(answered.headers.get('location')).toBe('/login?mfa=required');
    expect(cookieFrom(answered, SESSION)).toBeUndefined();
    const challenge = cookieFrom(answered, CHALLENGE)!;
    expect(challenge).toBeDefined();
    // Nothing is linked and nothing ended: whoever holds the GitHub account has not shown the code.
    expect(await t.gatehouse.stores.accounts.listUserAccounts(userId)).toEqual([]);
    for (const cookie of sessions) expect(await sessionStatus(cookie)).toBe(200);
    expect(await actions('provider_linked_to_existing_account')).toEqual([]);
    expect(await delivered(email, 'was linked')).toEqual([]);
    // The link waits server-side, its tokens sealed.
    const [waiting] = await pendingLinks();
    expect(waiting).toMatchObject({ user_id: userId, provider: 'github', provider_account_id: String(octo.id), provider_login: 'two-factor' });
    expect(JSON.stringify(waiting)).not.toContain(fake.issuedTokens.at(-1)!);

    // A wrong code: still nothing.
    const wrong = await t.request('POST', '/api/auth/2fa/verify', { cookie: challenge, json: { code: totp(secret, now(), 10) } });
    expect(wrong.status).toBe(401);
    expect(await t.gatehouse.stores.accounts.listUserAccounts(userId)).toEqual([]);
    for (const cookie of sessions) expect(await sessionStatus(cookie)).toBe(200);

    // The owner reads German: the notice comes in the account's language.
    await t.gatehouse.stores.users.setLanguage(userId, 'de');
    // The right code: linked now, the other sessions end, the owner is told, the new session stands.
    const right = await t.request('POST', '/api/auth/2fa/verify', { cookie: challenge, json: { code: totp(secret, now()) } });
    expect(right.status).toBe(200);
    expect(await right.json()).toEqual({ ok: true, returnTo: '/after' });
    const [account] = await t.gatehouse.stores.accounts.listUserAccounts(userId);
    expect(account).toMatchObject({ provider: 'github', providerAccountId: String(octo.id), providerLogin: 'two-factor' });
    expect(createEnvelope([KEY]).open(account!.accessTokenEnc, `${account!.id}.access_token`)).toBe(fake.issuedTokens.at(-1));
    for (const cookie of sessions) expect(await sessionStatus(cookie)).toBe(401);
    const session = await t.request('GET', '/api/auth/session', { cookie: cookieFrom(right, SESSION)! });
    expect(session.status).toBe(200);
    expect((await session.json()).session.methods).toEqual(['github', 'totp']);
    expect(await pendingLinks()).toEqual([]);
    const [linked] = await actions('provider_linked_to_existing_account');
    expect(linked).toMatchObject({
      userId,
      metadata: { provider: 'github', providerLogin: 'two-factor', afterSecondFactor: true, sessionsRevoked: 2, ownerNotified: true },
    });
    expect(await delivered(email, 'mit einer Anmeldung über GitHub verknüpft')).toHaveLength(1);
    // The password is the owner's (verified from their own browser): it stays.
    expect((await login(email, STRONG_PASSWORD)).status).toBe(200);

    // The next sign-in uses the link, and still owes the code; nothing waits for it.
    t.clock.advance(30_000);
    const again = await signIn('two-factor');
    expect(again.headers.get('location')).toBe('/login?mfa=required');
    expect(await pendingLinks()).toEqual([]);
  });

  test('a 2FA account: a challenge that expired links nothing, even with the right code; the sweep deletes the waiting link', async () => {
    const email = 'late@example.com';
    const { userId, secret, sessions } = await ownerWithSecondFactor(email);
    gitHubUser('late', email);
    const challenge = cookieFrom(await signIn('late'), CHALLENGE)!;
    expect(await pendingLinks()).toHaveLength(1);

    t.clock.advance(CHALLENGE_LIFETIME_MS);
    const late = await t.request('POST', '/api/auth/2fa/verify', { cookie: challenge, json: { code: totp(secret, now()) } });
    expect(late.status).toBe(401);
    expect(cookieFrom(late, SESSION)).toBeUndefined();
    expect(await t.gatehouse.stores.accounts.listUserAccounts(userId)).toEqual([]);
    for (const cookie of sessions) expect(await sessionStatus(cookie)).toBe(200);
    expect(await t.gatehouse.sweep()).toMatchObject({ pendingLinks: 1 });
    expect(await pendingLinks()).toEqual([]);
    expect(await actions('provider_linked_to_existing_account')).toEqual([]);
  });

  test('a password login of the same account does not complete a link waiting for another challenge', async () => {
    const email = 'other-challenge@example.com';
    const { userId, secret } = await ownerWithSecondFactor(email);
    gitHubUser('other-challenge', email);
    expect(cookieFrom(await signIn('other-challenge'), CHALLENGE)).toBeDefined();
    const passwordChallenge = cookieFrom(await login(email, STRONG_PASSWORD), CHALLENGE)!;
    const verified = await t.request('POST', '/api/auth/2fa/verify', { cookie: passwordChallenge, json: { code: totp(secret, now()) } });
    expect(verified.status).toBe(200);
    expect(await t.gatehouse.stores.accounts.listUserAccounts(userId)).toEqual([]);
    expect(await pendingLinks()).toHaveLength(1);
  });

  test('a squatter registers the address and verifies it from a client without their session: the owner’s provider sign-in removes their password, ends their sessions and tells the owner', async () => {
    const email = 'a@example.com';
    const registered = await t.request('POST', '/api/auth/register', { json: { email, password: SQUATTER_PASSWORD }, ip: '198.51.100.66' });
    expect(registered.status).toBe(201);
    // The verification link opened by a client that is not signed in to the account (the squatter
    // read it somewhere, or the owner clicked it): the address is verified, the password not proven.
    await verifyEmail(email);
    const squatted = (await t.gatehouse.stores.users.findUserByEmail(email))!;
    expect(squatted).toMatchObject({ emailVerified: true, passwordUnproven: true });
    // The spec's flow still works: the password signs in.
    const squatterLogin = await login(email, SQUATTER_PASSWORD);
    expect(squatterLogin.status).toBe(200);
    const squatterSession = cookieFrom(squatterLogin, SESSION)!;

    gitHubUser('the-owner', email);
    const owner = await signIn('the-owner');
    expect(owner.headers.get('location')).toBe('/dashboard');
    const ownerSession = cookieFrom(owner, SESSION)!;
    const session = await (await t.request('GET', '/api/auth/session', { cookie: ownerSession })).json();
    expect(session.user).toMatchObject({ id: squatted.id, email, emailVerified: true });

    expect((await login(email, SQUATTER_PASSWORD)).status).toBe(401);
    expect(await sessionStatus(squatterSession)).toBe(401);
    expect(await sessionStatus(ownerSession)).toBe(200);
    expect(await t.gatehouse.stores.users.findUserById(squatted.id)).toMatchObject({ passwordHash: null, passwordUnproven: false });
    const [secured] = await actions('unverified_account_secured_for_provider_link');
    expect(secured).toMatchObject({
      userId: squatted.id,
      metadata: { provider: 'github', passwordUnproven: true, passwordRemoved: true, ownerNotified: true },
    });
    expect(secured!.metadata.sessionsRevoked).toBeGreaterThanOrEqual(1);
    const [notice] = await delivered(email, 'was secured');
    expect(notice!.text).toContain('http://localhost:3000/forgot-password');
  });

  test('verified from a browser signed in to the account: the provider sign-in links and keeps the password', async () => {
    const email = 'b@example.com';
    const registered = await t.request('POST', '/api/auth/register', { json: { email, password: STRONG_PASSWORD } });
    await verifyEmail(email, cookieFrom(registered, SESSION));
    const local = (await t.gatehouse.stores.users.findUserByEmail(email))!;
    expect(local).toMatchObject({ emailVerified: true, passwordUnproven: false });

    gitHubUser('b-owner', email);
    const signedIn = await signIn('b-owner');
    const session = await (await t.request('GET', '/api/auth/session', { cookie: cookieFrom(signedIn, SESSION)! })).json();
    expect(session.user.id).toBe(local.id);
    expect((await login(email, STRONG_PASSWORD)).status).toBe(200);
    expect(await actions('unverified_account_secured_for_provider_link')).toEqual([]);
    expect(await actions('provider_linked_to_existing_account')).toHaveLength(1);
    expect(await delivered(email, 'was secured')).toEqual([]);
  });

  test('an account moved onto the owner’s address by a link confirmed outside it: the owner’s provider sign-in unlinks the mover’s provider account', async () => {
    const mover = 'mover@example.net';
    const email = 'd@example.com';
    const registered = await t.request('POST', '/api/auth/register', { json: { email: mover, password: SQUATTER_PASSWORD } });
    await verifyEmail(mover, cookieFrom(registered, SESSION));
    gitHubUser('mover', mover);
    const linked = cookieFrom(await signIn('mover'), SESSION)!;
    const userId = (await t.gatehouse.stores.users.findUserByEmail(mover))!.id;
    expect(await t.gatehouse.stores.accounts.listUserAccounts(userId)).toHaveLength(1);
    const move = await t.request('POST', '/api/auth/email/change', { cookie: linked, json: { newEmail: email, currentPassword: SQUATTER_PASSWORD } });
    expect(move.status).toBe(200);
    await t.gatehouse.deliverQueuedEmails();
    const mailed = t.sentEmails.findLast((sent) => sent.to === email && /confirm-email-change\?token=/.test(sent.text))!;
    const token = decodeURIComponent(/confirm-email-change\?token=([^\s]+)/.exec(mailed.text)![1]!);
    // The owner of d@example.com follows the link from a client that is not signed in.
    expect((await t.request('POST', '/api/auth/email/change/confirm', { json: { token } })).status).toBe(200);

    gitHubUser('d-owner', email);
    const owner = await signIn('d-owner');
    const session = await (await t.request('GET', '/api/auth/session', { cookie: cookieFrom(owner, SESSION)! })).json();
    expect(session.user.id).toBe(userId);
    expect((await t.gatehouse.stores.accounts.listUserAccounts(userId)).map((account) => account.providerLogin)).toEqual(['d-owner']);
    const [secured] = await actions('unverified_account_secured_for_provider_link');
    expect(secured).toMatchObject({ userId, metadata: { passwordUnproven: true, passwordRemoved: true, accountsUnlinked: 1 } });
    expect((await login(email, SQUATTER_PASSWORD)).status).toBe(401);
    // The mover's GitHub account no longer leads into the owner's account (it makes an account of its own).
    const again = await signIn('mover');
    const theirs = await (await t.request('GET', '/api/auth/session', { cookie: cookieFrom(again, SESSION)! })).json();
    expect(theirs.user.id).not.toBe(userId);
  });

  test('an existing link is no new proof of the mailbox: signing in through it changes nothing', async () => {
    const email = 'c@example.com';
    gitHubUser('c-owner', email);
    const first = await signIn('c-owner');
    const userId = (await (await t.request('GET', '/api/auth/session', { cookie: cookieFrom(first, SESSION)! })).json()).user.id as string;
    // The account then holds a password marked unproven, set here in the database (no HTTP path
    // gives an account one that way); its hash is a registration's.
    expect((await t.request('POST', '/api/auth/register', { json: { email: 'reference@example.com', password: STRONG_PASSWORD } })).status).toBe(201);
    const hash = (await t.gatehouse.stores.users.findUserByEmail('reference@example.com'))!.passwordHash!;
    await t.gatehouse.stores.users.setPassword(userId, hash);
    await t.database.kysely.updateTable('users').set({ password_unproven: 1 }).where('id', '=', userId).execute();

    const again = await signIn('c-owner');
    expect(again.headers.get('location')).toBe('/dashboard');
    expect(await t.gatehouse.stores.users.findUserById(userId)).toMatchObject({ passwordHash: hash, passwordUnproven: true });
    expect((await login(email, STRONG_PASSWORD)).status).toBe(200);
    expect(await actions('unverified_account_secured_for_provider_link')).toEqual([]);
  });
});
