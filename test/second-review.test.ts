/**
 * What the second security review found on the sign-in paths, each reproduced over HTTP on both
 * databases: a squatter's passkey and password surviving the owner's proofs of the mailbox, a
 * passkey without user verification skipping the code step, unbounded re-authentication,
 * re-authentication for passkey and provider changes, the daily cap on wrong email codes, the
 * email sign-in page naming its account, a long return_to through the code step, and the
 * sessions that end when two-factor sign-in is turned on or the address changes.
 */
import { afterEach, beforeEach, expect, test } from 'vitest';
import { STRONG_PASSWORD, cookieFrom, createTestGatehouse, describeEachDialect, type TestGatehouse } from './support/harness.js';
import { SoftwareAuthenticator, type Bends } from './support/software-authenticator.js';
import { totp } from './support/totp-oracle.js';

const SESSION = 'gatehouse_session';
const MFA_CHALLENGE = 'gatehouse_mfa';
const LOGIN_CHALLENGE = 'gatehouse_passkey';
const REGISTER_CHALLENGE = 'gatehouse_passkey_reg';
const ORIGIN = 'http://localhost:3000';
const SQUATTER_PASSWORD = 'Squatter-Pass-42';
const SQUATTER_IP = '198.51.100.66';
const VICTIM = 'victim@example.com';

describeEachDialect('second security review: sign-in paths', (dialect) => {
  let t: TestGatehouse;

  beforeEach(async () => {
    t = await createTestGatehouse(dialect, {
      env: {
        ENCRYPTION_KEY_BASE64: Buffer.alloc(32, 7).toString('base64'),
        RATE_LIMIT_LOGIN: '1000/15m',
        RATE_LIMIT_MFA_VERIFY: '1000/15m',
        RATE_LIMIT_PASSKEY_LOGIN: '1000/15m',
        RATE_LIMIT_VERIFY_EMAIL: '1000/15m',
        RATE_LIMIT_EMAIL_SIGN_IN: '1000/15m',
        RATE_LIMIT_PASSWORD_RESET_REQUEST: '1000/15m',
        RATE_LIMIT_REAUTHENTICATE: '1000/15m',
        LOCKOUT_MAX_FAILURES: '1000',
      },
    });
  });
  afterEach(async () => {
    await t.close();
  });

  const both = (...cookies: (string | undefined)[]): string => cookies.filter((each) => each !== undefined).join('; ');
  const now = (): number => t.clock.now().getTime();
  const sessionOf = async (cookie: string | undefined): Promise<{ status: number; methods?: string[] }> => {
    const response = await t.request('GET', '/api/auth/session', { cookie });
    return response.status === 200 ? { status: 200, methods: (await response.json()).session.methods } : { status: response.status };
  };
  const login = async (email: string, password: string): Promise<Response> => t.request('POST', '/api/auth/login', { json: { email, password } });

  /** The last link of a kind mailed to `to`. */
  async function linkTo(to: string, pathName: string): Promise<string> {
    await t.gatehouse.deliverQueuedEmails();
    const email = t.sentEmails.findLast((sent) => sent.to === to && sent.text.includes(`${pathName}?token=`));
    if (email === undefined) throw new Error(`no ${pathName} link mailed to ${to}`);
    return decodeURIComponent(new RegExp(`${pathName}\\?token=([^\\s]+)`).exec(email.text)![1]!);
  }

  /** The squatter registers the victim's address with a password of their own. */
  async function squat(): Promise<{ squatterCookie: string; userId: string; verifyToken: string }> {
    const registered = await t.request('POST', '/api/auth/register', { json: { email: VICTIM, password: SQUATTER_PASSWORD }, ip: SQUATTER_IP });
    expect(registered.status).toBe(201);
    const userId = (await t.gatehouse.stores.users.findUserByEmail(VICTIM))!.id;
    return { squatterCookie: cookieFrom(registered, SESSION)!, userId, verifyToken: await linkTo(VICTIM, '/verify-email') };
  }

  async function addPasskey(cookie: string, authenticator: SoftwareAuthenticator, currentPassword: string | null): Promise<Response> {
    const options = await t.request('POST', '/api/auth/passkeys/register/options', {
      cookie,
      json: currentPassword === null ? {} : { currentPassword },
    });
    if (options.status !== 200) return options;
    const { response } = authenticator.create(await options.json());
    return t.request('POST', '/api/auth/passkeys/register/verify', { cookie: both(cookie, cookieFrom(options, REGISTER_CHALLENGE)), json: { response } });
  }

  async function passkeySignIn(authenticator: SoftwareAuthenticator, bends: Bends = {}): Promise<Response> {
    const options = await t.request('POST', '/api/auth/passkeys/login/options');
    const response = authenticator.get(await options.json(), bends);
    return t.request('POST', '/api/auth/passkeys/login/verify', { cookie: cookieFrom(options, LOGIN_CHALLENGE), json: { response } });
  }

  async function enableTotp(cookie: string, currentPassword: string): Promise<string> {
    const setup = await t.request('POST', '/api/auth/2fa/totp/setup', { cookie, json: { currentPassword } });
    expect(setup.status).toBe(200);
    const { secret } = await setup.json();
    expect((await t.request('POST', '/api/auth/2fa/totp/enable', { cookie, json: { code: totp(secret, now()) } })).status).toBe(200);
    return secret;
  }

  async function emailSignInByLink(email: string): Promise<Response> {
    expect((await t.request('POST', '/api/auth/email-sign-in/request', { json: { email } })).status).toBe(200);
    return t.request('POST', '/api/auth/email-sign-in/verify', { json: { token: await linkTo(email, '/email-sign-in') } });
  }

  /** A registered, verified account whose owner verified from their signed-in browser. */
  async function owner(email = 'ana@example.com'): Promise<{ cookie: string; userId: string }> {
    const registered = await t.request('POST', '/api/auth/register', { json: { email, password: STRONG_PASSWORD } });
    const cookie = cookieFrom(registered, SESSION)!;
    expect((await t.request('POST', '/api/auth/verify-email', { cookie, json: { token: await linkTo(email, '/verify-email') } })).status).toBe(200);
    return { cookie, userId: (await t.gatehouse.stores.users.findUserByEmail(email))!.id };
  }

  // --- 1. A squatter's passkey -------------------------------------------------------------------

  test('a passkey cannot be added to an unverified address (as two-factor sign-in cannot)', async () => {
    const { squatterCookie, userId } = await squat();
    const refused = await addPasskey(squatterCookie, new SoftwareAuthenticator(ORIGIN), SQUATTER_PASSWORD);
    expect(refused.status).toBe(403);
    expect((await refused.json()).error).toBe('email_not_verified');
    expect(await t.gatehouse.stores.passkeys.countUserPasskeys(userId)).toBe(0);
  });

  test("the owner's reset removes what the squatter set up after a verification from another client: passkey, second factor, sessions", async () => {
    const { verifyToken, userId } = await squat();
    // The owner confirms from a mail client that is not signed in; the squatter signs in again with their password.
    expect((await t.request('POST', '/api/auth/verify-email', { json: { token: verifyToken } })).status).toBe(200);
    const squatterCookie = cookieFrom(await login(VICTIM, SQUATTER_PASSWORD), SESSION)!;
    const squatterKey = new SoftwareAuthenticator(ORIGIN);
    expect((await addPasskey(squatterCookie, squatterKey, SQUATTER_PASSWORD)).status).toBe(200);
    await enableTotp(squatterCookie, SQUATTER_PASSWORD);

    expect((await t.request('POST', '/api/auth/password-reset/request', { json: { email: VICTIM } })).status).toBe(200);
    const confirmed = await t.request('POST', '/api/auth/password-reset/confirm', {
      json: { token: await linkTo(VICTIM, '/reset-password'), password: STRONG_PASSWORD },
    });
    expect(confirmed.status).toBe(200);

    expect((await sessionOf(squatterCookie)).status).toBe(401);
    expect((await passkeySignIn(squatterKey)).status).toBe(401);
    expect(await t.gatehouse.stores.passkeys.countUserPasskeys(userId)).toBe(0);
    // The squatter's authenticator no longer stands between the owner and their account.
    const ownerLogin = await login(VICTIM, STRONG_PASSWORD);
    expect(await ownerLogin.json()).toEqual({ ok: true });
    expect((await login(VICTIM, SQUATTER_PASSWORD)).status).toBe(401);
  });

  // --- 2. The owner's own Confirm ----------------------------------------------------------------

  test("verification from another client ends the squatter's sessions and pending email change; the password stays usable until the owner's first mailbox sign-in removes it", async () => {
    const { squatterCookie, verifyToken } = await squat();
    const changed = await t.request('POST', '/api/auth/email/change', {
      cookie: squatterCookie,
      json: { newEmail: 'squatter@example.net', currentPassword: SQUATTER_PASSWORD },
    });
    expect(changed.status).toBe(200);
    const moveToken = await linkTo('squatter@example.net', '/confirm-email-change');

    // The verify page tells the owner when and from where the account was created.
    const page = await (await t.request('GET', `/verify-email?token=${encodeURIComponent(verifyToken)}`)).text();
    expect(page).toContain(SQUATTER_IP);
    expect(page).toContain('November 22, 2026 at 12:00 PM UTC');

    expect((await t.request('POST', '/api/auth/verify-email', { json: { token: verifyToken } })).status).toBe(200);
    expect((await sessionOf(squatterCookie)).status).toBe(401);
    const move = await t.request('POST', '/api/auth/email/change/confirm', { json: { token: moveToken } });
    expect(move.status).toBe(400);
    expect((await move.json()).error).toBe('invalid_token');

    // The spec's flow keeps working: the password signs in after a verification from any client.
    const again = await login(VICTIM, SQUATTER_PASSWORD);
    expect(again.status).toBe(200);
    const squatterAgain = cookieFrom(again, SESSION)!;
    const squatterKey = new SoftwareAuthenticator(ORIGIN);
    expect((await addPasskey(squatterAgain, squatterKey, SQUATTER_PASSWORD)).status).toBe(200);
    expect(
      (
        await t.request('POST', '/api/auth/email/change', {
          cookie: squatterAgain,
          json: { newEmail: 'squatter@example.net', currentPassword: SQUATTER_PASSWORD },
        })
      ).status,
    ).toBe(200);
    const secondMove = await linkTo('squatter@example.net', '/confirm-email-change');

    // The owner signs in by email link: everything that came from the password is gone, and they are told why.
    const signedIn = await emailSignInByLink(VICTIM);
    expect(signedIn.status).toBe(200);
    expect((await sessionOf(cookieFrom(signedIn, SESSION))).status).toBe(200);
    expect((await login(VICTIM, SQUATTER_PASSWORD)).status).toBe(401);
    expect((await sessionOf(squatterAgain)).status).toBe(401);
    expect((await passkeySignIn(squatterKey)).status).toBe(401);
    expect((await t.request('POST', '/api/auth/email/change/confirm', { json: { token: secondMove } })).status).toBe(400);
    expect((await t.gatehouse.stores.users.findUserByEmail(VICTIM))!.email).toBe(VICTIM);
    await t.gatehouse.deliverQueuedEmails();
    expect(t.sentEmails.some((sent) => sent.to === VICTIM && /account was secured/.test(sent.subject))).toBe(true);
  });

  test('verified from a browser signed in to the account, the password is the owner’s: a later email sign-in keeps it and the other sessions', async () => {
    const { cookie } = await owner();
    const elsewhere = cookieFrom(await login('ana@example.com', STRONG_PASSWORD), SESSION)!;
    const signedIn = await emailSignInByLink('ana@example.com');
    expect(signedIn.status).toBe(200);
    expect((await login('ana@example.com', STRONG_PASSWORD)).status).toBe(200);
    expect((await sessionOf(cookie)).status).toBe(200);
    expect((await sessionOf(elsewhere)).status).toBe(200);
  });

  test('verification from the signed-in browser keeps that session and ends the others', async () => {
    const registered = await t.request('POST', '/api/auth/register', { json: { email: 'ana@example.com', password: STRONG_PASSWORD } });
    const cookie = cookieFrom(registered, SESSION)!;
    const other = cookieFrom(await login('ana@example.com', STRONG_PASSWORD), SESSION)!;
    expect((await t.request('POST', '/api/auth/verify-email', { cookie, json: { token: await linkTo('ana@example.com', '/verify-email') } })).status).toBe(200);
    expect((await sessionOf(cookie)).status).toBe(200);
    expect((await sessionOf(other)).status).toBe(401);
  });

  test("an account moved onto the victim's address by a link confirmed outside it: the victim's reset removes the mover's passkey and second factor", async () => {
    // The squatter's own address, verified from their signed-in browser: their password is proven there.
    const registered = await t.request('POST', '/api/auth/register', { json: { email: 'squatter@example.net', password: SQUATTER_PASSWORD }, ip: SQUATTER_IP });
    const squatterCookie = cookieFrom(registered, SESSION)!;
    const verified = await t.request('POST', '/api/auth/verify-email', {
      cookie: squatterCookie,
      json: { token: await linkTo('squatter@example.net', '/verify-email') },
    });
    expect(verified.status).toBe(200);
    const userId = (await t.gatehouse.stores.users.findUserByEmail('squatter@example.net'))!.id;
    const squatterKey = new SoftwareAuthenticator(ORIGIN);
    expect((await addPasskey(squatterCookie, squatterKey, SQUATTER_PASSWORD)).status).toBe(200);
    await enableTotp(squatterCookie, SQUATTER_PASSWORD);
    const move = await t.request('POST', '/api/auth/email/change', { cookie: squatterCookie, json: { newEmail: VICTIM, currentPassword: SQUATTER_PASSWORD } });
    expect(move.status).toBe(200);

    // The victim follows "Confirm your new email address" from a client that is not signed in.
    const confirmed = await t.request('POST', '/api/auth/email/change/confirm', { json: { token: await linkTo(VICTIM, '/confirm-email-change') } });
    expect(confirmed.status).toBe(200);
    expect(await t.gatehouse.stores.users.findUserById(userId)).toMatchObject({ email: VICTIM, emailVerified: true, passwordUnproven: true });
    expect((await sessionOf(squatterCookie)).status).toBe(401);

    expect((await t.request('POST', '/api/auth/password-reset/request', { json: { email: VICTIM } })).status).toBe(200);
    const reset = await t.request('POST', '/api/auth/password-reset/confirm', {
      json: { token: await linkTo(VICTIM, '/reset-password'), password: STRONG_PASSWORD },
    });
    expect(reset.status).toBe(200);

    expect((await passkeySignIn(squatterKey)).status).toBe(401);
    expect(await t.gatehouse.stores.passkeys.countUserPasskeys(userId)).toBe(0);
    // No code step: the squatter's authenticator app no longer stands between the victim and the account.
    expect(await (await login(VICTIM, STRONG_PASSWORD)).json()).toEqual({ ok: true });
    expect((await login(VICTIM, SQUATTER_PASSWORD)).status).toBe(401);
    const [secured] = (await t.gatehouse.stores.audit.listRecentEvents(100)).filter(
      (event) => event.metadata.action === 'unverified_account_secured_for_password_reset',
    );
    expect(secured).toMatchObject({ userId, metadata: { passwordUnproven: true, passwordRemoved: true, accountsUnlinked: 0 } });
  });

  test('the owner moving their own account from its signed-in browser loses nothing: passkey, password and session stay', async () => {
    const { cookie, userId } = await owner();
    const key = new SoftwareAuthenticator(ORIGIN);
    expect((await addPasskey(cookie, key, STRONG_PASSWORD)).status).toBe(200);
    const move = await t.request('POST', '/api/auth/email/change', { cookie, json: { newEmail: 'ana@example.org', currentPassword: STRONG_PASSWORD } });
    expect(move.status).toBe(200);
    const confirmed = await t.request('POST', '/api/auth/email/change/confirm', {
      cookie,
      json: { token: await linkTo('ana@example.org', '/confirm-email-change') },
    });
    expect(confirmed.status).toBe(200);
    expect(await t.gatehouse.stores.users.findUserById(userId)).toMatchObject({ email: 'ana@example.org', passwordUnproven: false });

    // A sign-in by a proof of the new mailbox is no reason to remove anything.
    const signedIn = await emailSignInByLink('ana@example.org');
    expect(signedIn.status).toBe(200);
    expect((await sessionOf(cookie)).status).toBe(200);
    expect(await (await passkeySignIn(key)).json()).toEqual({ ok: true });
    expect(await (await login('ana@example.org', STRONG_PASSWORD)).json()).toEqual({ ok: true });
    expect(await t.gatehouse.stores.passkeys.countUserPasskeys(userId)).toBe(1);
  });

  // --- 3. User verification ----------------------------------------------------------------------

  test('a passkey without user verification owes the code step of a 2FA account; with it, the session says so', async () => {
    const { cookie } = await owner();
    const key = new SoftwareAuthenticator(ORIGIN);
    expect((await addPasskey(cookie, key, STRONG_PASSWORD)).status).toBe(200);

    // Without two-factor sign-in, one factor is what the account asks for; methods tell the two apart.
    const plain = await passkeySignIn(key, { userVerified: false });
    expect(await plain.json()).toEqual({ ok: true });
    expect((await sessionOf(cookieFrom(plain, SESSION))).methods).toEqual(['passkey']);
    const verified = await passkeySignIn(key);
    expect((await sessionOf(cookieFrom(verified, SESSION))).methods).toEqual(['passkey', 'user_verification']);

    const secret = await enableTotp(cookie, STRONG_PASSWORD);
    const owed = await passkeySignIn(key, { userVerified: false });
    expect(await owed.json()).toEqual({ ok: true, mfaRequired: true, methods: ['totp', 'recovery_code'] });
    expect(cookieFrom(owed, SESSION)).toBeUndefined();
    t.clock.advance(30_000);
    const finished = await t.request('POST', '/api/auth/2fa/verify', { cookie: cookieFrom(owed, MFA_CHALLENGE), json: { code: totp(secret, now()) } });
    expect(finished.status).toBe(200);
    expect((await sessionOf(cookieFrom(finished, SESSION))).methods).toEqual(['passkey', 'totp']);

    // With user verification, the passkey stands for both factors.
    const strong = await passkeySignIn(key);
    expect(await strong.json()).toEqual({ ok: true });
    expect((await sessionOf(cookieFrom(strong, SESSION))).methods).toEqual(['passkey', 'user_verification']);
  });

  // --- 4. Re-authentication is counted; passkeys are capped -------------------------------------

  test('re-authentication attempts are limited per user, right passwords included', async () => {
    await t.close();
    t = await createTestGatehouse(dialect, { env: { RATE_LIMIT_REAUTHENTICATE: '3/15m' } });
    const { cookie } = await owner();
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) {
      statuses.push((await t.request('POST', '/api/auth/passkeys/register/options', { cookie, json: { currentPassword: STRONG_PASSWORD } })).status);
    }
    expect(statuses).toEqual([200, 200, 200, 429]);
    const password = await t.request('POST', '/api/auth/password/change', {
      cookie,
      json: { currentPassword: STRONG_PASSWORD, newPassword: 'Another-Horse-77' },
    });
    expect(password.status).toBe(429);
    expect(Number(password.headers.get('retry-after'))).toBeGreaterThan(0);
    t.clock.advance(15 * 60_000);
    expect((await t.request('POST', '/api/auth/passkeys/register/options', { cookie, json: { currentPassword: STRONG_PASSWORD } })).status).toBe(200);
  });

  test('an account holds at most 20 passkeys', async () => {
    const { cookie, userId } = await owner();
    // One authenticator each: an authenticator refuses to register twice for one account.
    for (let i = 0; i < 20; i++) expect((await addPasskey(cookie, new SoftwareAuthenticator(ORIGIN), STRONG_PASSWORD)).status).toBe(200);
    const refused = await addPasskey(cookie, new SoftwareAuthenticator(ORIGIN), STRONG_PASSWORD);
    expect(refused.status).toBe(409);
    expect((await refused.json()).error).toBe('passkey_limit_reached');
    expect(await t.gatehouse.stores.passkeys.countUserPasskeys(userId)).toBe(20);
  });

  // --- 6. Small ones -----------------------------------------------------------------------------

  test('renaming or removing a passkey and unlinking a provider re-authenticate (a DELETE carries currentPassword in its body)', async () => {
    const { cookie } = await owner();
    expect((await addPasskey(cookie, new SoftwareAuthenticator(ORIGIN), STRONG_PASSWORD)).status).toBe(200);
    const [passkey] = (await (await t.request('GET', '/api/auth/passkeys', { cookie })).json()).passkeys;

    const renameWithout = await t.request('PATCH', `/api/auth/passkeys/${passkey.id}`, { cookie, json: { name: 'Stolen' } });
    expect(renameWithout.status).toBe(403);
    expect((await renameWithout.json()).error).toBe('reauthentication_required');
    const renameWrong = await t.request('PATCH', `/api/auth/passkeys/${passkey.id}`, { cookie, json: { name: 'Stolen', currentPassword: 'Wrong-Pass-99' } });
    expect(renameWrong.status).toBe(401);
    expect((await renameWrong.json()).error).toBe('invalid_credentials');
    expect((await t.request('PATCH', `/api/auth/passkeys/${passkey.id}`, { cookie, json: { name: 'Laptop', currentPassword: STRONG_PASSWORD } })).status).toBe(
      200,
    );

    expect((await t.request('DELETE', `/api/auth/passkeys/${passkey.id}`, { cookie })).status).toBe(403);
    expect((await t.request('DELETE', `/api/auth/passkeys/${passkey.id}`, { cookie, json: { currentPassword: 'Wrong-Pass-99' } })).status).toBe(401);
    expect((await t.request('DELETE', `/api/auth/passkeys/${passkey.id}`, { cookie, json: { currentPassword: STRONG_PASSWORD } })).status).toBe(200);

    // Unlinking is re-authenticated before anything is looked up.
    const unlink = await t.request('DELETE', '/api/auth/accounts/github', { cookie });
    expect(unlink.status).toBe(403);
    expect((await unlink.json()).error).toBe('reauthentication_required');
    expect((await t.request('DELETE', '/api/auth/accounts/github', { cookie, json: { currentPassword: STRONG_PASSWORD } })).status).toBe(404);
  });

  test('at most 50 wrong email sign-in codes per address per day; then even the right code waits for the next day', async () => {
    await t.close();
    t = await createTestGatehouse(dialect, {
      env: { RATE_LIMIT_VERIFY_EMAIL: '10000/15m', RATE_LIMIT_EMAIL_SIGN_IN: '1000/15m', LOCKOUT_MAX_FAILURES: '1000' },
    });
    await owner();
    t.clock.set(Date.UTC(2026, 10, 23, 0, 0, 1));
    for (let i = 0; i < 50; i++) {
      const wrong = await t.request('POST', '/api/auth/email-sign-in/verify', { json: { email: 'ana@example.com', code: '000000' } });
      expect(wrong.status).toBe(401);
    }
    expect((await t.request('POST', '/api/auth/email-sign-in/request', { json: { email: 'ana@example.com' } })).status).toBe(200);
    await t.gatehouse.deliverQueuedEmails();
    const code = /code on the sign-in page: (\d{6})/.exec(t.sentEmails.at(-1)!.text)![1]!;
    const refused = await t.request('POST', '/api/auth/email-sign-in/verify', { json: { email: 'ana@example.com', code } });
    expect(refused.status).toBe(429);
    expect((await refused.json()).error).toBe('rate_limited');
    // Refusals past the limit are counted, not written one by one.
    for (let i = 0; i < 20; i++)
      expect((await t.request('POST', '/api/auth/email-sign-in/verify', { json: { email: 'ana@example.com', code } })).status).toBe(429);
    const refusalRows = (await t.gatehouse.stores.audit.listRecentEvents(500)).filter((event) => event.metadata.reason === 'daily_code_limit');
    expect(refusalRows).toHaveLength(1);
    // Another address is not affected; the link still works.
    expect((await t.request('POST', '/api/auth/email-sign-in/verify', { json: { email: 'bob@example.com', code: '000000' } })).status).toBe(401);
    t.clock.advance(24 * 3600_000);
    expect((await t.request('POST', '/api/auth/email-sign-in/request', { json: { email: 'ana@example.com' } })).status).toBe(200);
    await t.gatehouse.deliverQueuedEmails();
    const fresh = /code on the sign-in page: (\d{6})/.exec(t.sentEmails.at(-1)!.text)![1]!;
    expect((await t.request('POST', '/api/auth/email-sign-in/verify', { json: { email: 'ana@example.com', code: fresh } })).status).toBe(200);
  });

  test('the email sign-in page names the account its link signs into', async () => {
    await owner();
    expect((await t.request('POST', '/api/auth/email-sign-in/request', { json: { email: 'ana@example.com' } })).status).toBe(200);
    const token = await linkTo('ana@example.com', '/email-sign-in');
    const page = await (await t.request('GET', `/email-sign-in?token=${encodeURIComponent(token)}`)).text();
    expect(page).toContain('Sign in as <strong>a…@example.com</strong>');
    expect(page).not.toContain('ana@example.com');
    const unknown = await (await t.request('GET', '/email-sign-in?token=nope.nope')).text();
    expect(unknown).not.toContain('Sign in as');
  });

  test('a 2FA sign-in carries a long return_to through the code step', async () => {
    const { cookie } = await owner();
    const secret = await enableTotp(cookie, STRONG_PASSWORD);
    const returnTo = `/orders/${'x'.repeat(1500)}?tab=open`;
    expect((await t.request('POST', '/api/auth/email-sign-in/request', { json: { email: 'ana@example.com', return_to: returnTo } })).status).toBe(200);
    const owed = await t.request('POST', '/api/auth/email-sign-in/verify', { json: { token: await linkTo('ana@example.com', '/email-sign-in') } });
    expect((await owed.json()).mfaRequired).toBe(true);
    t.clock.advance(30_000);
    const finished = await t.request('POST', '/api/auth/2fa/verify', { cookie: cookieFrom(owed, MFA_CHALLENGE), json: { code: totp(secret, now()) } });
    expect(finished.status).toBe(200);
    expect(await finished.json()).toEqual({ ok: true, returnTo });
  });

  test('turning on two-factor sign-in and changing the address end the other sessions', async () => {
    const { cookie } = await owner();
    const other = cookieFrom(await login('ana@example.com', STRONG_PASSWORD), SESSION)!;
    await enableTotp(cookie, STRONG_PASSWORD);
    expect((await sessionOf(cookie)).status).toBe(200);
    expect((await sessionOf(other)).status).toBe(401);

    const second = await owner('bob@example.com');
    const bobElsewhere = cookieFrom(await login('bob@example.com', STRONG_PASSWORD), SESSION)!;
    expect(
      (await t.request('POST', '/api/auth/email/change', { cookie: second.cookie, json: { newEmail: 'robert@example.com', currentPassword: STRONG_PASSWORD } }))
        .status,
    ).toBe(200);
    const confirm = await t.request('POST', '/api/auth/email/change/confirm', {
      cookie: second.cookie,
      json: { token: await linkTo('robert@example.com', '/confirm-email-change') },
    });
    expect(confirm.status).toBe(200);
    expect((await sessionOf(second.cookie)).status).toBe(200);
    expect((await sessionOf(bobElsewhere)).status).toBe(401);
  });
});
