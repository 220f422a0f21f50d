/**
 * Passkeys (DESIGN §9.4) over HTTP, on both databases, with the responses of a software
 * authenticator (support/software-authenticator.ts) checked by the real server-side verification.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { startBanner } from '../src/banner.js';
import { loadConfig } from '../src/config.js';
import { passkeyAddressProblem, relyingPartyOf } from '../src/passkeys/relying-party.js';
import { STRONG_PASSWORD, cookieFrom, createTestGatehouse, describeEachDialect, setCookieHeader, type TestGatehouse } from './support/harness.js';
import { SoftwareAuthenticator, type Bends, type CreationOptions, type RequestOptions } from './support/software-authenticator.js';
import { totp } from './support/totp-oracle.js';

const SESSION = 'gatehouse_session';
const LOGIN_CHALLENGE = 'gatehouse_passkey';
const REGISTER_CHALLENGE = 'gatehouse_passkey_reg';
const ORIGIN = 'http://localhost:3000';
const KEY = randomBytes(32).toString('base64');
const ADMIN_KEY = 'passkey-test-admin-key-0123456789abcdef';

describeEachDialect('passkeys (DESIGN §9.4)', (dialect) => {
  let t: TestGatehouse;
  let cookie: string;
  let userId: string;
  let authenticator: SoftwareAuthenticator;

  beforeEach(async () => {
    t = await createTestGatehouse(dialect, {
      env: {
        ENCRYPTION_KEY_BASE64: KEY,
        RATE_LIMIT_LOGIN: '1000/15m',
        RATE_LIMIT_MFA_VERIFY: '1000/15m',
        RATE_LIMIT_PASSKEY_LOGIN: '1000/15m',
        APP_NAME: 'Acme',
        ADMIN_API_KEY: ADMIN_KEY,
      },
    });
    cookie = cookieFrom(await t.request('POST', '/api/auth/register', { json: { email: 'ana@example.com', password: STRONG_PASSWORD } }), SESSION)!;
    userId = (await t.gatehouse.stores.users.findUserByEmail('ana@example.com'))!.id;
    // A passkey needs a verified address (test/second-review.test.ts shows the refusal).
    await t.gatehouse.stores.users.markEmailVerified(userId);
    authenticator = new SoftwareAuthenticator(ORIGIN);
  });
  afterEach(async () => {
    await t.close();
  });

  const both = (...cookies: (string | undefined)[]): string => cookies.filter((each) => each !== undefined).join('; ');

  async function registerOptions(
    sessionCookie = cookie,
    body: unknown = { currentPassword: STRONG_PASSWORD },
  ): Promise<{ options: CreationOptions; challenge: string }> {
    const response = await t.request('POST', '/api/auth/passkeys/register/options', { cookie: sessionCookie, json: body });
    expect(response.status).toBe(200);
    return { options: await response.json(), challenge: cookieFrom(response, REGISTER_CHALLENGE)! };
  }

  async function addPasskey(
    using = authenticator,
    options: { sessionCookie?: string; name?: string; bends?: Bends } = {},
  ): Promise<{ response: Response; body: { passkey?: { id: string; name: string } } & Record<string, unknown> }> {
    const sessionCookie = options.sessionCookie ?? cookie;
    const { options: creation, challenge } = await registerOptions(sessionCookie);
    const { response: credential } = using.create(creation, options.bends);
    const response = await t.request('POST', '/api/auth/passkeys/register/verify', {
      cookie: both(sessionCookie, challenge),
      json: { response: credential, ...(options.name !== undefined ? { name: options.name } : {}) },
    });
    return { response, body: await response.clone().json() };
  }

  async function loginOptions(ip?: string): Promise<{ options: RequestOptions; challenge: string; response: Response }> {
    const response = await t.request('POST', '/api/auth/passkeys/login/options', { ip });
    return { options: response.status === 200 ? await response.clone().json() : null, challenge: cookieFrom(response, LOGIN_CHALLENGE)!, response };
  }

  const verifyLogin = (challenge: string | undefined, response: unknown, ip?: string) =>
    t.request('POST', '/api/auth/passkeys/login/verify', { cookie: challenge, json: { response }, ip });

  async function signIn(using = authenticator, bends: Bends = {}): Promise<Response> {
    const { options, challenge } = await loginOptions();
    return verifyLogin(challenge, using.get(options, bends));
  }

  async function failure(response: Response): Promise<[number, string]> {
    return [response.status, (await response.json()).error];
  }

  async function lastAudit(type: string): Promise<Record<string, unknown> | undefined> {
    return (await t.gatehouse.stores.audit.listRecentEvents(50)).find((event) => event.type === type)?.metadata;
  }

  test('register → list → sign in (methods ["passkey", "user_verification"]) → rename → remove, each audited', async () => {
    const { options, challenge } = await registerOptions();
    expect(options.rp).toEqual({ name: 'Acme', id: 'localhost' });
    expect(options.user.name).toBe('ana@example.com');
    expect(Buffer.from(options.user.id, 'base64url').toString('utf8')).toBe(userId);
    expect(options).toMatchObject({
      attestation: 'none',
      authenticatorSelection: { residentKey: 'required', userVerification: 'preferred' },
      excludeCredentials: [],
    });
    expect(options.challenge).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const registerCookie = (await t.request('POST', '/api/auth/passkeys/register/options', { cookie, json: { currentPassword: STRONG_PASSWORD } })).headers
      .getSetCookie()
      .find((header) => header.startsWith(`${REGISTER_CHALLENGE}=`))!;
    expect(registerCookie).toMatch(/HttpOnly/);
    expect(registerCookie).toMatch(/SameSite=Strict/);
    expect(registerCookie).toMatch(/Max-Age=300/);

    const { response: credential } = authenticator.create(options);
    const verified = await t.request('POST', '/api/auth/passkeys/register/verify', {
      cookie: both(cookie, challenge),
      json: { response: credential, name: 'Laptop' },
    });
    expect(verified.status).toBe(200);
    expect(setCookieHeader(verified, REGISTER_CHALLENGE)).toMatch(/Max-Age=0/);
    const { passkey } = await verified.json();
    expect(passkey).toEqual({ id: expect.stringMatching(/^[0-9a-f-]{36}$/), name: 'Laptop', createdAt: t.clock.now().toISOString(), lastUsedAt: null });
    expect(await lastAudit('passkey_added')).toEqual({ passkeyId: passkey.id, name: 'Laptop' });

    // The second registration excludes the first credential.
    const second = await registerOptions();
    expect(second.options.excludeCredentials).toEqual([{ id: credential.id, type: 'public-key', transports: ['internal', 'hybrid'] }]);

    const list = await t.request('GET', '/api/auth/passkeys', { cookie });
    expect(await list.json()).toEqual({ passkeys: [passkey] });

    t.clock.advance(60_000);
    const { options: request, challenge: loginChallenge, response: optionsResponse } = await loginOptions();
    expect(request).toMatchObject({ rpId: 'localhost', userVerification: 'preferred', allowCredentials: [] });
    expect(setCookieHeader(optionsResponse, LOGIN_CHALLENGE)).toMatch(
      /^gatehouse_passkey=v1\.[^;]+; Max-Age=300; Path=\/; Expires=[^;]+; HttpOnly; SameSite=Strict$/,
    );
    const signedIn = await verifyLogin(loginChallenge, authenticator.get(request));
    expect(signedIn.status).toBe(200);
    expect(await signedIn.json()).toEqual({ ok: true });
    expect(setCookieHeader(signedIn, LOGIN_CHALLENGE)).toMatch(/Max-Age=0/);
    const session = cookieFrom(signedIn, SESSION)!;
    const { user, session: info } = await (await t.request('GET', '/api/auth/session', { cookie: session })).json();
    expect(user.email).toBe('ana@example.com');
    expect(info.methods).toEqual(['passkey', 'user_verification']);
    expect(await lastAudit('login_success')).toEqual({ email: 'ana@example.com', method: 'passkey', passkeyId: passkey.id, userVerified: true });
    const used = (await (await t.request('GET', '/api/auth/passkeys', { cookie })).json()).passkeys[0];
    expect(used.lastUsedAt).toBe(t.clock.now().toISOString());
    expect((await t.gatehouse.stores.passkeys.listUserPasskeys(userId))[0]!.counter).toBe(1);

    const renamed = await t.request('PATCH', `/api/auth/passkeys/${passkey.id}`, { cookie, json: { name: '  Work phone ', currentPassword: STRONG_PASSWORD } });
    expect(renamed.status).toBe(200);
    expect((await renamed.json()).passkey.name).toBe('Work phone');
    expect(await lastAudit('passkey_renamed')).toEqual({ passkeyId: passkey.id, name: 'Work phone' });

    const removed = await t.request('DELETE', `/api/auth/passkeys/${passkey.id}`, { cookie, json: { currentPassword: STRONG_PASSWORD } });
    expect([removed.status, await removed.json()]).toEqual([200, { ok: true }]);
    expect(await lastAudit('passkey_removed')).toEqual({ passkeyId: passkey.id, name: 'Work phone' });
    expect(await (await t.request('GET', '/api/auth/passkeys', { cookie })).json()).toEqual({ passkeys: [] });
    // The removed passkey no longer signs in.
    expect(await failure(await signIn())).toEqual([401, 'passkey_invalid']);
  });

  test('a passkey sign-in with user verification asks no second factor, even with two-factor sign-in on', async () => {
    const { secret } = await (await t.request('POST', '/api/auth/2fa/totp/setup', { cookie, json: { currentPassword: STRONG_PASSWORD } })).json();
    expect((await t.request('POST', '/api/auth/2fa/totp/enable', { cookie, json: { code: totp(secret, t.clock.now().getTime()) } })).status).toBe(200);
    expect((await addPasskey()).response.status).toBe(200);
    // The password alone now only gets the challenge …
    const password = await t.request('POST', '/api/auth/login', { json: { email: 'ana@example.com', password: STRONG_PASSWORD } });
    expect((await password.json()).mfaRequired).toBe(true);
    // … the passkey gets the session.
    const signedIn = await signIn();
    expect(signedIn.status).toBe(200);
    const { session } = await (await t.request('GET', '/api/auth/session', { cookie: cookieFrom(signedIn, SESSION) })).json();
    expect(session.methods).toEqual(['passkey', 'user_verification']);
  });

  test('registration needs the session and re-authentication; its challenge is bound to the user and works once', async () => {
    const noSession = await t.request('POST', '/api/auth/passkeys/register/options', { json: { currentPassword: STRONG_PASSWORD } });
    expect(await failure(noSession)).toEqual([401, 'not_authenticated']);
    const noPassword = await t.request('POST', '/api/auth/passkeys/register/options', { cookie, json: {} });
    expect(await failure(noPassword)).toEqual([403, 'reauthentication_required']);
    expect(cookieFrom(noPassword, REGISTER_CHALLENGE)).toBeUndefined();
    const wrong = await t.request('POST', '/api/auth/passkeys/register/options', { cookie, json: { currentPassword: 'Wrong-Horse-99' } });
    expect(await failure(wrong)).toEqual([401, 'invalid_credentials']);
    const verifyWithout = await t.request('POST', '/api/auth/passkeys/register/verify', { json: { response: {} } });
    expect(await failure(verifyWithout)).toEqual([401, 'not_authenticated']);

    const { options, challenge } = await registerOptions();
    const { response: credential } = authenticator.create(options);
    // Without its challenge cookie, and with another user's session, it opens nothing.
    const noChallenge = await t.request('POST', '/api/auth/passkeys/register/verify', { cookie, json: { response: credential } });
    expect(await failure(noChallenge)).toEqual([400, 'passkey_challenge_invalid']);
    const bob = cookieFrom(await t.request('POST', '/api/auth/register', { json: { email: 'bob@example.com', password: STRONG_PASSWORD } }), SESSION)!;
    const otherUser = await t.request('POST', '/api/auth/passkeys/register/verify', { cookie: both(bob, challenge), json: { response: credential } });
    expect(await failure(otherUser)).toEqual([400, 'passkey_challenge_invalid']);
    expect((await t.request('POST', '/api/auth/passkeys/register/verify', { cookie: both(cookie, challenge), json: { response: credential } })).status).toBe(
      200,
    );
    const again = await t.request('POST', '/api/auth/passkeys/register/verify', { cookie: both(cookie, challenge), json: { response: credential } });
    expect(await failure(again)).toEqual([400, 'passkey_challenge_invalid']);

    // Another origin, an expired challenge, a malformed response.
    const other = new SoftwareAuthenticator('https://evil.example');
    expect(await failure((await addPasskey(other)).response)).toEqual([400, 'passkey_invalid']);
    // A well-signed registration whose public key is a point off its curve: it could never sign in.
    expect(await failure((await addPasskey(new SoftwareAuthenticator(ORIGIN), { bends: { offCurvePublicKey: true } })).response)).toEqual([
      400,
      'passkey_invalid',
    ]);
    // A response whose id is not the credential id in its authenticator data.
    const renamed = await registerOptions();
    const { response: misnamed } = new SoftwareAuthenticator(ORIGIN).create(renamed.options);
    const otherId = Buffer.alloc(32, 7).toString('base64url');
    const mismatch = await t.request('POST', '/api/auth/passkeys/register/verify', {
      cookie: both(cookie, renamed.challenge),
      json: { response: { ...misnamed, id: otherId, rawId: otherId } },
    });
    expect(await failure(mismatch)).toEqual([400, 'passkey_invalid']);
    const late = await registerOptions();
    t.clock.advance(5 * 60_000 + 1000);
    const expired = await t.request('POST', '/api/auth/passkeys/register/verify', {
      cookie: both(cookie, late.challenge),
      json: { response: new SoftwareAuthenticator(ORIGIN).create(late.options).response },
    });
    expect(await failure(expired)).toEqual([400, 'passkey_challenge_invalid']);
    const fresh = await registerOptions();
    const malformed = await t.request('POST', '/api/auth/passkeys/register/verify', {
      cookie: both(cookie, fresh.challenge),
      json: { response: { ...credential, response: { ...credential.response, attestationObject: 'AAAA' } } },
    });
    expect(await failure(malformed)).toEqual([400, 'passkey_invalid']);
    const shapeless = await t.request('POST', '/api/auth/passkeys/register/verify', { cookie, json: { response: { id: 'not base64url!' } } });
    expect(await failure(shapeless)).toEqual([400, 'validation_error']);
    expect(await t.gatehouse.stores.passkeys.countUserPasskeys(userId)).toBe(1);
  });

  test('sign-in refusals: 401 with a clear code and a login_failure row that holds no secret', async () => {
    expect((await addPasskey()).response.status).toBe(200);
    const expectRefusal = async (response: Response, code: string, reason: string) => {
      expect(await failure(response)).toEqual([401, code]);
      expect(cookieFrom(response, SESSION)).toBeUndefined();
      const row = await lastAudit('login_failure');
      expect(row).toMatchObject({ method: 'passkey', reason });
      // Only these: never the response, its signature, the challenge or the cookie.
      expect(Object.keys(row!).every((key) => ['method', 'reason', 'email', 'passkeyId'].includes(key))).toBe(true);
    };

    // Unknown credential: an authenticator this server never saw.
    await expectRefusal(await signIn(new SoftwareAuthenticator(ORIGIN).withCredentialFor('localhost')), 'passkey_invalid', 'unknown_credential');
    // Another origin.
    await expectRefusal(await signIn(authenticator, { origin: 'https://evil.example' }), 'passkey_invalid', 'wrong_origin');
    // Another RP id.
    await expectRefusal(await signIn(authenticator, { rpId: 'evil.example' }), 'passkey_invalid', 'wrong_rp_id');
    // A signature that does not verify.
    await expectRefusal(await signIn(authenticator, { badSignature: true }), 'passkey_invalid', 'bad_signature');

    // A good sign-in, then its challenge (and its response) again.
    const { options, challenge } = await loginOptions();
    const assertion = authenticator.get(options);
    expect((await verifyLogin(challenge, assertion)).status).toBe(200);
    await expectRefusal(await verifyLogin(challenge, assertion), 'passkey_challenge_invalid', 'challenge_reused');
    // The old response under a new challenge.
    await expectRefusal(await verifyLogin((await loginOptions()).challenge, assertion), 'passkey_challenge_invalid', 'challenge_mismatch');
    // A counter that did not grow (a cloned authenticator): the stored one is 1 now.
    const stored = (await t.gatehouse.stores.passkeys.listUserPasskeys(userId))[0]!.counter;
    await expectRefusal(await signIn(authenticator, { counter: stored }), 'passkey_invalid', 'counter_regression');
    await expectRefusal(await signIn(authenticator, { counter: stored - 1 }), 'passkey_invalid', 'counter_regression');
    // No challenge cookie, a forged one, an expired one.
    await expectRefusal(await verifyLogin(undefined, assertion), 'passkey_challenge_invalid', 'challenge_missing_or_expired');
    const forged = `${LOGIN_CHALLENGE}=v1.${Buffer.from(JSON.stringify({ k: 'login', c: 'x', u: null, e: Date.now() * 2 })).toString('base64url')}.AAAA`;
    await expectRefusal(await verifyLogin(forged, assertion), 'passkey_challenge_invalid', 'challenge_missing_or_expired');
    const late = await loginOptions();
    t.clock.advance(5 * 60_000 + 1000);
    await expectRefusal(await verifyLogin(late.challenge, authenticator.get(late.options)), 'passkey_challenge_invalid', 'challenge_missing_or_expired');
    // A registration's challenge is not a sign-in's.
    const registration = await registerOptions();
    const swapped = `${LOGIN_CHALLENGE}=${registration.challenge.split('=')[1]}`;
    await expectRefusal(
      await verifyLogin(swapped, authenticator.get({ challenge: registration.options.challenge })),
      'passkey_challenge_invalid',
      'challenge_missing_or_expired',
    );

    // After all that, the right passkey still signs in.
    expect((await signIn()).status).toBe(200);
    // Malformed bodies are 400, never a 500.
    for (const body of [{}, { response: null }, { response: { ...assertion, id: 'bad id' } }, { response: { ...assertion, type: 'other' } }]) {
      const response = await t.request('POST', '/api/auth/passkeys/login/verify', { json: body });
      expect(await failure(response)).toEqual([400, 'validation_error']);
    }
  });

  test('a disabled account: the proved passkey gets 403 account_disabled and a login_failure row; nothing of the sign-in is spent', async () => {
    expect((await addPasskey()).response.status).toBe(200);
    const adminCall = (action: 'disable' | 'enable') =>
      t.request('POST', `/api/admin/users/${userId}/${action}`, { headers: { authorization: `Bearer ${ADMIN_KEY}` } });
    expect((await adminCall('disable')).status).toBe(200);
    const before = (await t.gatehouse.stores.passkeys.listUserPasskeys(userId))[0]!;
    const lastLoginBefore = (await t.gatehouse.stores.users.findUserById(userId))!.lastLoginAt;

    t.clock.advance(60_000);
    const refused = await signIn();
    expect(await failure(refused)).toEqual([403, 'account_disabled']);
    expect(cookieFrom(refused, SESSION)).toBeUndefined();
    const row = (await t.gatehouse.stores.audit.listRecentEvents(50)).find((event) => event.type === 'login_failure')!;
    expect([row.userId, row.metadata]).toEqual([userId, { method: 'passkey', reason: 'account_disabled', email: 'ana@example.com', passkeyId: before.id }]);
    const after = (await t.gatehouse.stores.passkeys.listUserPasskeys(userId))[0]!;
    expect([after.counter, after.lastUsedAt]).toEqual([before.counter, before.lastUsedAt]);
    expect((await t.gatehouse.stores.users.findUserById(userId))!.lastLoginAt).toEqual(lastLoginBefore);

    // A passkey that does not prove itself is still 401: a stranger learns nothing of the account.
    expect(await failure(await signIn(authenticator, { badSignature: true }))).toEqual([401, 'passkey_invalid']);
    expect((await adminCall('enable')).status).toBe(200);
    expect((await signIn()).status).toBe(200);
  });

  test('two sign-ins at once with one counter value (a cloned authenticator): one session, the other 401 counter_regression', async () => {
    expect((await addPasskey()).response.status).toBe(200);
    const next = (await t.gatehouse.stores.passkeys.listUserPasskeys(userId))[0]!.counter + 1;
    // Two challenges, each signed with the same counter: each alone would pass the counter check.
    const [one, two] = await Promise.all([loginOptions(), loginOptions()]);
    const answers = await Promise.all([one, two].map(({ options, challenge }) => verifyLogin(challenge, authenticator.get(options, { counter: next }))));
    expect(answers.map((answer) => answer.status).sort()).toEqual([200, 401]);
    expect(await failure(answers.find((answer) => answer.status === 401)!)).toEqual([401, 'passkey_invalid']);
    expect(answers.filter((answer) => cookieFrom(answer, SESSION) !== undefined)).toHaveLength(1);
    expect(await lastAudit('login_failure')).toMatchObject({ method: 'passkey', reason: 'counter_regression' });
    expect((await t.gatehouse.stores.passkeys.listUserPasskeys(userId))[0]!.counter).toBe(next);
  });

  test('the options and the verification both count toward RATE_LIMIT_PASSKEY_LOGIN per IP: 429 after the limit', async () => {
    const limited = await createTestGatehouse(dialect, { env: { RATE_LIMIT_PASSKEY_LOGIN: '3/15m' } });
    try {
      const options = await limited.request('POST', '/api/auth/passkeys/login/options', { ip: '198.51.100.7' });
      expect(options.status).toBe(200);
      const challenge = cookieFrom(options, LOGIN_CHALLENGE)!;
      const response = new SoftwareAuthenticator(ORIGIN).withCredentialFor('localhost').get(await options.json());
      const verify = () => limited.request('POST', '/api/auth/passkeys/login/verify', { cookie: challenge, json: { response }, ip: '198.51.100.7' });
      expect((await verify()).status).toBe(401);
      expect((await limited.request('POST', '/api/auth/passkeys/login/options', { ip: '198.51.100.7' })).status).toBe(200);
      const limitedVerify = await verify();
      expect(await failure(limitedVerify)).toEqual([429, 'rate_limited']);
      expect(Number(limitedVerify.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(await failure(await limited.request('POST', '/api/auth/passkeys/login/options', { ip: '198.51.100.7' }))).toEqual([429, 'rate_limited']);
      // Another address is not affected.
      expect((await limited.request('POST', '/api/auth/passkeys/login/options', { ip: '198.51.100.8' })).status).toBe(200);
    } finally {
      await limited.close();
    }
  });

  test('never the last way in: 409 last_sign_in_method for the last passkey of an account without password or provider', async () => {
    const first = (await addPasskey(authenticator, { name: 'One' })).body.passkey!;
    expect(first.name).toBe('One');
    const phone = new SoftwareAuthenticator(ORIGIN);
    const second = (await addPasskey(phone)).body.passkey!;
    expect(second.name).toBe('Passkey 2');
    await t.gatehouse.stores.users.removePassword(userId);
    // A passwordless account re-authenticates by a recent sign-in: this session is.
    expect((await t.request('DELETE', `/api/auth/passkeys/${first.id}`, { cookie })).status).toBe(200);
    const last = await t.request('DELETE', `/api/auth/passkeys/${second.id}`, { cookie });
    expect(await failure(last)).toEqual([409, 'last_sign_in_method']);

    // A linked provider is another way in: the passkey may go, then the provider may not.
    const now = t.clock.now();
    await t.gatehouse.stores.accounts.createAccount({
      id: randomUUID(),
      userId,
      provider: 'github',
      providerAccountId: 'gh-1',
      providerLogin: 'ana',
      accessTokenEnc: 'v1.k.iv.ct.tag',
      refreshTokenEnc: null,
      accessTokenExpiresAt: null,
      scope: '',
      createdAt: now,
      updatedAt: now,
    });
    // The passkey is a way in too: the provider of a passkey-and-provider account may be unlinked.
    expect((await t.request('DELETE', '/api/auth/accounts/github', { cookie })).status).toBe(200);
    expect(await failure(await t.request('DELETE', `/api/auth/passkeys/${second.id}`, { cookie }))).toEqual([409, 'last_sign_in_method']);
    expect(await t.gatehouse.stores.passkeys.countUserPasskeys(userId)).toBe(1);
    // And the passkey-only account signs in with it; the removed one does not.
    expect((await signIn(phone)).status).toBe(200);
    expect(await failure(await signIn(authenticator))).toEqual([401, 'passkey_invalid']);
  });

  test('two removals at once of the last two passkeys of a passwordless account: one goes, the other is 409; one way in stays', async () => {
    let kept = { authenticator, passkey: (await addPasskey(authenticator)).body.passkey! };
    await t.gatehouse.stores.users.removePassword(userId);
    // Each removal, alone, sees the other passkey as a way in; the user row's lock makes them take
    // turns. A race shows itself only in some interleavings: several rounds, each from two passkeys.
    for (let round = 0; round < 5; round++) {
      const added = new SoftwareAuthenticator(ORIGIN);
      const pair = [kept, { authenticator: added, passkey: (await addPasskey(added)).body.passkey! }];
      const answers = await Promise.all(pair.map(({ passkey }) => t.request('DELETE', `/api/auth/passkeys/${passkey.id}`, { cookie })));
      expect(answers.map((answer) => answer.status).sort()).toEqual([200, 409]);
      expect(await failure(answers.find((answer) => answer.status === 409)!)).toEqual([409, 'last_sign_in_method']);
      expect(await t.gatehouse.stores.passkeys.countUserPasskeys(userId)).toBe(1);
      kept = pair[answers[0]!.status === 409 ? 0 : 1]!;
    }
    expect((await signIn(kept.authenticator)).status).toBe(200);
  });

  test("another user's passkey is 404 for rename and removal; malformed ids are 404 before any query; bad names 400", async () => {
    const { passkey } = (await addPasskey()).body;
    const bob = cookieFrom(await t.request('POST', '/api/auth/register', { json: { email: 'bob@example.com', password: STRONG_PASSWORD } }), SESSION)!;
    expect(
      await failure(await t.request('PATCH', `/api/auth/passkeys/${passkey!.id}`, { cookie: bob, json: { name: 'Mine', currentPassword: STRONG_PASSWORD } })),
    ).toEqual([404, 'not_found']);
    expect(await failure(await t.request('DELETE', `/api/auth/passkeys/${passkey!.id}`, { cookie: bob, json: { currentPassword: STRONG_PASSWORD } }))).toEqual([
      404,
      'not_found',
    ]);
    expect(await (await t.request('GET', '/api/auth/passkeys', { cookie: bob })).json()).toEqual({ passkeys: [] });
    for (const id of ['abc', '%00', `${passkey!.id}x`, encodeURIComponent("1' OR '1'='1")]) {
      expect(await failure(await t.request('DELETE', `/api/auth/passkeys/${id}`, { cookie }))).toEqual([404, 'not_found']);
      expect(await failure(await t.request('PATCH', `/api/auth/passkeys/${id}`, { cookie, json: { name: 'x' } }))).toEqual([404, 'not_found']);
    }
    expect(
      await failure(await t.request('PATCH', `/api/auth/passkeys/${randomUUID()}`, { cookie, json: { name: 'x', currentPassword: STRONG_PASSWORD } })),
    ).toEqual([404, 'not_found']);
    for (const name of ['', '   ', 'x'.repeat(65), 'a\u0000b', 42]) {
      expect(await failure(await t.request('PATCH', `/api/auth/passkeys/${passkey!.id}`, { cookie, json: { name } }))).toEqual([400, 'validation_error']);
    }
    for (const [method, path] of [
      ['GET', '/passkeys'],
      ['PATCH', `/passkeys/${passkey!.id}`],
      ['DELETE', `/passkeys/${passkey!.id}`],
    ] as const) {
      expect(await failure(await t.request(method, `/api/auth${path}`, { json: method === 'PATCH' ? { name: 'x' } : undefined }))).toEqual([
        401,
        'not_authenticated',
      ]);
    }
    expect((await t.gatehouse.stores.passkeys.listUserPasskeys(userId))[0]!.name).toBe('Passkey');
  });

  test('deleting the account deletes its passkeys', async () => {
    expect((await addPasskey()).response.status).toBe(200);
    expect((await t.request('POST', '/api/auth/account/delete', { cookie, json: { currentPassword: STRONG_PASSWORD } })).status).toBe(200);
    const rows = await t.database.kysely.selectFrom('passkeys').selectAll().execute();
    expect(rows).toEqual([]);
    expect(await failure(await signIn())).toEqual([401, 'passkey_invalid']);
  });

  test('the pre-hijacking defence: a sign-in by email removes the passkeys set up through a password chosen before the address was proved', async () => {
    await t.close();
    t = await createTestGatehouse(dialect, { env: { RATE_LIMIT_PASSKEY_LOGIN: '1000/15m' } });
    // The squatter registers the victim's address; the owner confirms it from a client that is not
    // signed in (the password stays unproven); the squatter signs in again and plants a passkey.
    await t.request('POST', '/api/auth/register', { json: { email: 'victim@example.com', password: STRONG_PASSWORD } });
    userId = (await t.gatehouse.stores.users.findUserByEmail('victim@example.com'))!.id;
    await t.gatehouse.stores.users.markEmailVerified(userId, { passwordProven: false });
    cookie = cookieFrom(await t.request('POST', '/api/auth/login', { json: { email: 'victim@example.com', password: STRONG_PASSWORD } }), SESSION)!;
    expect((await addPasskey()).response.status).toBe(200);
    // The owner signs in by email (a link to the address proves it).
    const requested = await t.request('POST', '/api/auth/email-sign-in/request', { json: { email: 'victim@example.com' } });
    expect(requested.status).toBe(200);
    await t.gatehouse.deliverQueuedEmails();
    const mail = t.sentEmails.find((email) => email.to === 'victim@example.com' && /code/i.test(email.text))!;
    const code = /\b(\d{6})\b/.exec(mail.text)![1];
    const owner = await t.request('POST', '/api/auth/email-sign-in/verify', { json: { email: 'victim@example.com', code } });
    expect(owner.status).toBe(200);
    expect(await t.gatehouse.stores.passkeys.countUserPasskeys(userId)).toBe(0);
    expect(await failure(await signIn())).toEqual([401, 'passkey_invalid']);
  });
});

describe('the relying party and the start banner', () => {
  test('RP id is the host name of BASE_URL; origins are its origin and TRUSTED_ORIGINS', () => {
    const config = loadConfig({ BASE_URL: 'https://auth.example.com:8443', TRUSTED_ORIGINS: 'https://app.example.com', JWT_SECRET: 'x'.repeat(40) });
    expect(relyingPartyOf({ baseUrl: config.baseUrl, trustedOrigins: config.trustedOrigins, appName: 'Acme' })).toEqual({
      id: 'auth.example.com',
      name: 'Acme',
      origins: ['https://auth.example.com:8443', 'https://app.example.com'],
    });
  });

  test('http://localhost works; other plain-http hosts and IP addresses get a start-up warning', () => {
    expect(passkeyAddressProblem('http://localhost:3000')).toBeNull();
    expect(passkeyAddressProblem('http://auth.localhost:3000')).toBeNull();
    expect(passkeyAddressProblem('https://auth.example.com')).toBeNull();
    expect(passkeyAddressProblem('http://auth.example.com')).toMatch(/plain http.*https/);
    expect(passkeyAddressProblem('http://127.0.0.1:3000')).toMatch(/IP address/);
    expect(passkeyAddressProblem('https://[::1]:3000')).toMatch(/IP address/);
    const warn = startBanner(loadConfig({ BASE_URL: 'http://auth.internal:3000' }), 'http://127.0.0.1:3000', 1).filter(
      (line) => line.details.capability === 'passkeys',
    );
    expect(warn).toEqual([
      expect.objectContaining({
        level: 'warn',
        message: expect.stringMatching(/^Passkeys will not work: BASE_URL http:\/\/auth\.internal:3000 is plain http/),
      }),
    ]);
    const none = startBanner(loadConfig({ BASE_URL: 'http://localhost:3000', NODE_ENV: 'development' }), 'http://127.0.0.1:3000', 1);
    expect(none.some((line) => line.details.capability === 'passkeys')).toBe(false);
  });
});
