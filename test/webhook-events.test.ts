/**
 * Webhook events written by the flows (webhooks/events.ts), over HTTP on every available database:
 * each change reports its event in its own transaction — `user.created` exactly once whatever the
 * sign-up path (password, GitHub, an OpenID provider, email sign-in, import) and never for a
 * failed sign-up or a second sign-in; one test per other event; the endpoints' filter and their
 * disabled state; nothing written without an endpoint; and no secret in any payload.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import bcrypt from 'bcrypt';
import { afterAll, afterEach, beforeAll, expect, test } from 'vitest';
import { startFakeGitHub, type FakeGitHub } from './support/fake-github.js';
import { startOidcProvider, type RealOidcProvider } from './support/oidc-provider.js';
import { SoftwareAuthenticator } from './support/software-authenticator.js';
import { totp } from './support/totp-oracle.js';
import { emitEvent } from '../src/webhooks/events.js';
import { STRONG_PASSWORD, cookieFrom, createTestGatehouse, describeEachDialect, type TestGatehouse } from './support/harness.js';

const BASE_URL = 'http://localhost:3000';
const SESSION = 'gatehouse_session';
const ADMIN_KEY = 'webhook-events-admin-key-0123456789abcdef';
const KEY = randomBytes(32).toString('base64');
const NEW_PASSWORD = 'Brand-New-Pass-7';
const WRONG_PASSWORD = 'Wrong-Password-1';

let github: FakeGitHub;
let acme: RealOidcProvider;
beforeAll(async () => {
  github = await startFakeGitHub();
  acme = await startOidcProvider({ redirectUris: [`${BASE_URL}/api/auth/callback/acme`] });
});
afterAll(async () => {
  await github?.close();
  await acme?.close();
});

function env(extra: Record<string, string> = {}): Record<string, string> {
  return {
    // Development mode with a loopback BASE_URL: tokens in the answers, as a client would read them from the email.
    NODE_ENV: 'development',
    ENCRYPTION_KEY_BASE64: KEY,
    AUTH_SECRET: 'test-auth-secret-0123456789',
    ADMIN_API_KEY: ADMIN_KEY,
    GITHUB_CLIENT_ID: github.clientId,
    GITHUB_CLIENT_SECRET: github.clientSecret,
    GITHUB_AUTH_URL: github.authUrl,
    GITHUB_API_URL: github.apiUrl,
    OIDC_PROVIDERS: 'acme',
    OIDC_ACME_ISSUER: acme.issuer,
    OIDC_ACME_CLIENT_ID: acme.clientId,
    OIDC_ACME_CLIENT_SECRET: acme.clientSecret,
    OIDC_ACME_TRUST_EMAIL: 'true',
    EMAIL_SIGN_IN_SIGNUP: 'true',
    RATE_LIMIT_LOGIN: '1000/15m',
    RATE_LIMIT_REGISTER: '1000/15m',
    RATE_LIMIT_VERIFY_EMAIL: '1000/15m',
    RATE_LIMIT_EMAIL_SIGN_IN: '1000/15m',
    RATE_LIMIT_MFA_VERIFY: '1000/15m',
    RATE_LIMIT_ADMIN: '1000/1m',
    ...extra,
  };
}

interface StoredEvent {
  id: string;
  type: string;
  userId: string | null;
  payload: string;
  data: Record<string, unknown>;
}

let nextGitHubId = 7000;
let nextSub = 1;
/** GitHub users already made, by login: a second sign-in is the same GitHub account. */
const gitHubUsers = new Set<string>();

describeEachDialect('webhook events from the flows', (dialect) => {
  let t: TestGatehouse;
  afterEach(async () => {
    await t?.close();
  });

  async function open(extra: Record<string, string> = {}): Promise<TestGatehouse> {
    t = await createTestGatehouse(dialect, { env: env(extra), overrides: { providerHTTP: { timeoutMs: 2000 } } });
    return t;
  }
  /** An endpoint row as an operator's registration leaves it; its secret is never opened here. */
  async function endpoint(events = ',*,', disabledAt: number | null = null): Promise<string> {
    const id = randomUUID();
    const now = t.clock.now().getTime();
    await t.database.kysely
      .insertInto('webhook_endpoints')
      .values({
        id,
        url: 'http://127.0.0.1:9/hook',
        events,
        description: null,
        secret_sealed: 'sealed-secret-not-opened-in-these-tests',
        previous_secret_sealed: null,
        previous_secret_until: null,
        disabled_at: disabledAt,
        disabled_reason: disabledAt === null ? null : 'manual',
        failing_since: null,
        created_at: now,
        updated_at: now,
      })
      .execute();
    return id;
  }
  async function stored(type?: string): Promise<StoredEvent[]> {
    // Background work (the account-locked notice) first, as the next request would find it.
    await t.gatehouse.deliverQueuedEmails();
    // In the order they were written: the injected clock stands still, so by their deliveries' sequence.
    const rows = await t.database.kysely
      .selectFrom('webhook_events')
      .innerJoin('webhook_deliveries', 'webhook_deliveries.event_id', 'webhook_events.id')
      .select(['webhook_events.id', 'webhook_events.type', 'webhook_events.user_id', 'webhook_events.payload', 'webhook_deliveries.seq'])
      .orderBy('webhook_deliveries.seq')
      .execute();
    const seen = new Set<string>();
    return rows
      .filter((row) => {
        if (seen.has(row.id)) return false;
        seen.add(row.id);
        return true;
      })
      .map((row) => {
        const body = JSON.parse(row.payload) as { type: string; timestamp: string; data: Record<string, unknown> };
        expect(body.type).toBe(row.type);
        return { id: row.id, type: row.type, userId: row.user_id, payload: row.payload, data: body.data };
      })
      .filter((event) => type === undefined || event.type === type);
  }
  const countRows = async (table: 'webhook_events' | 'webhook_deliveries'): Promise<number> =>
    (await t.database.kysely.selectFrom(table).select('id').execute()).length;

  const register = (email: string, password = STRONG_PASSWORD) => t.request('POST', '/api/auth/register', { json: { email, password } });
  const login = (email: string, password = STRONG_PASSWORD) => t.request('POST', '/api/auth/login', { json: { email, password } });
  const admin = (method: string, path: string, options: { body?: string; headers?: Record<string, string> } = {}) =>
    t.request(method, `/api/admin${path}`, { ...options, headers: { authorization: `Bearer ${ADMIN_KEY}`, ...options.headers } });
  const sessionOf = async (cookie: string | undefined) => {
    const answer = await t.request('GET', '/api/auth/session', { cookie });
    expect(answer.status).toBe(200);
    return (await answer.json()) as { user: { id: string; email: string | null }; session: { id: string } };
  };
  /** Registers and verifies the address from the signed-in browser: a verified account whose password is its owner's. */
  async function verifiedAccount(email: string): Promise<{ id: string; cookie: string }> {
    const registered = await register(email);
    expect(registered.status).toBe(201);
    const cookie = cookieFrom(registered, SESSION)!;
    const { verificationToken } = (await registered.json()) as { verificationToken: string };
    expect((await t.request('POST', '/api/auth/verify-email', { json: { token: verificationToken }, cookie })).status).toBe(200);
    return { id: (await sessionOf(cookie)).user.id, cookie };
  }
  async function gitHubSignIn(login: string, email: string | null = `${login}@example.com`): Promise<Response> {
    if (!gitHubUsers.has(login)) {
      gitHubUsers.add(login);
      github.setUser({ id: (nextGitHubId += 1), login, emails: email === null ? [] : [{ email, primary: true, verified: true }] });
    }
    const started = await t.request('GET', '/api/auth/oauth/github');
    const pending = started.headers
      .getSetCookie()
      .map((header) => header.split(';')[0]!)
      .find((pair) => pair.startsWith('gatehouse_oauth_'))!;
    const url = await github.authorize(started.headers.get('location')!, { login });
    return t.request('GET', `${url.pathname}${url.search}`, { cookie: pending });
  }
  async function acmeSignIn(who: { sub: string; email: string }): Promise<Response> {
    const started = await t.request('GET', '/api/auth/oauth/acme');
    const pending = started.headers
      .getSetCookie()
      .map((header) => header.split(';')[0]!)
      .find((pair) => pair.startsWith('gatehouse_oauth_'))!;
    const url = await acme.authorize(started.headers.get('location')!, { ...who, email_verified: true, name: who.sub, preferred_username: who.sub });
    return t.request('GET', `${url.pathname}${url.search}`, { cookie: pending });
  }
  /** Asks for a sign-in email, lets the sender run, and reads the link's token and the code. */
  async function mailedSignIn(email: string): Promise<{ token: string; code: string }> {
    const before = t.sentEmails.length;
    expect((await t.request('POST', '/api/auth/email-sign-in/request', { json: { email } })).status).toBe(200);
    await t.gatehouse.deliverQueuedEmails();
    const sent = t.sentEmails.slice(before).find((e) => e.to === email && e.subject.startsWith('Sign in to'))!;
    const link = /\/email-sign-in\?token=(\S+)/.exec(sent.text)!;
    const code = /code on the sign-in page: (\d{6})\b/.exec(sent.text)!;
    return { token: decodeURIComponent(link[1]!), code: code[1]! };
  }
  const importLines = (lines: unknown[], query = '') =>
    admin('POST', `/users/import${query}`, { body: lines.map((line) => JSON.stringify(line)).join('\n'), headers: { 'content-type': 'application/x-ndjson' } });

  // --- Without endpoints, and the endpoints' filter ----------------------------------------------

  test('with no endpoint rows nothing is written to webhook_events: register, login, logout, a password change', async () => {
    await open();
    const cookie = cookieFrom(await register('quiet@example.com'), SESSION)!;
    expect((await login('quiet@example.com')).status).toBe(200);
    expect(
      (await t.request('POST', '/api/auth/password/change', { cookie, json: { currentPassword: STRONG_PASSWORD, newPassword: NEW_PASSWORD } })).status,
    ).toBe(200);
    expect((await t.request('POST', '/api/auth/logout', { cookie })).status).toBe(200);
    expect(await countRows('webhook_events')).toBe(0);
    expect(await countRows('webhook_deliveries')).toBe(0);
  });

  test("an endpoint filtered to ',user.created,' gets only user.created; a disabled endpoint gets nothing", async () => {
    await open();
    const wanted = await endpoint(',user.created,');
    const disabled = await endpoint(',*,', t.clock.now().getTime());
    const cookie = cookieFrom(await register('filtered@example.com'), SESSION)!;
    expect((await login('filtered@example.com')).status).toBe(200);
    await t.request('POST', '/api/auth/logout', { cookie });
    const events = await stored();
    expect(events.map((event) => event.type)).toEqual(['user.created']);
    const deliveries = await t.database.kysely.selectFrom('webhook_deliveries').select(['endpoint_id', 'event_id', 'status']).execute();
    expect(deliveries).toEqual([{ endpoint_id: wanted, event_id: events[0]!.id, status: 'pending' }]);
    expect(deliveries.some((delivery) => delivery.endpoint_id === disabled)).toBe(false);
  });

  // --- user.created, exactly once per path ---------------------------------------------------------

  test('password: user.created once (method password, unverified) and session.created; a second sign-in and a duplicate registration add no user.created', async () => {
    await open();
    await endpoint();
    const registered = await register('pat@example.com');
    expect(registered.status).toBe(201);
    const { user, session } = await sessionOf(cookieFrom(registered, SESSION));
    const created = await stored('user.created');
    expect(created).toHaveLength(1);
    expect(created[0]).toMatchObject({ userId: user.id, data: { userId: user.id, email: 'pat@example.com', method: 'password', emailVerified: false } });
    expect((await stored('session.created')).map((event) => event.data)).toEqual([
      { userId: user.id, email: 'pat@example.com', sessionId: session.id, methods: 'password' },
    ]);

    const second = await login('pat@example.com');
    expect(second.status).toBe(200);
    expect((await register('PAT@example.com')).status).toBe(409);
    expect(await stored('user.created')).toHaveLength(1);
    const sessions = await stored('session.created');
    expect(sessions).toHaveLength(2);
    expect(sessions.map((event) => event.data.sessionId)).toContain((await sessionOf(cookieFrom(second, SESSION))).session.id);
  });

  test('a failed sign-up emits nothing: a taken address, a refused password, a wrong sign-in', async () => {
    await open();
    expect((await register('taken@example.com')).status).toBe(201);
    await endpoint();
    expect((await register('taken@example.com')).status).toBe(409);
    expect((await register('short@example.com', 'short')).status).toBe(400);
    expect((await login('taken@example.com', WRONG_PASSWORD)).status).toBe(401);
    expect(await stored()).toEqual([]);
  });

  test('an event written in a transaction that rolls back is gone with it (the mechanism every sign-up relies on)', async () => {
    await open();
    await endpoint();
    const subject = { id: randomUUID(), email: 'never@example.com' };
    await expect(
      t.gatehouse.stores.transaction(async (tx) => {
        await tx.users.createUser({ ...subject, passwordHash: null, emailVerified: false, createdAt: t.clock.now() });
        await emitEvent(tx, t.clock.now(), 'user.created', subject, { method: 'password', emailVerified: false });
        throw new Error('the sign-up failed after its event');
      }),
    ).rejects.toThrow('the sign-up failed after its event');
    expect(await t.gatehouse.stores.users.findUserById(subject.id)).toBeNull();
    expect(await countRows('webhook_events')).toBe(0);
    expect(await countRows('webhook_deliveries')).toBe(0);
  });

  test('GitHub: the sign-up is one user.created (method github, verified) and no user.provider_linked; a second sign-in is one more session.created only', async () => {
    await open();
    await endpoint();
    const first = await gitHubSignIn('octo-events');
    expect(first.status).toBe(302);
    const { user, session } = await sessionOf(cookieFrom(first, SESSION));
    expect((await stored('user.created')).map((event) => event.data)).toEqual([
      { userId: user.id, email: 'octo-events@example.com', method: 'github', emailVerified: true },
    ]);
    expect((await stored('session.created')).map((event) => event.data)).toEqual([
      { userId: user.id, email: 'octo-events@example.com', sessionId: session.id, methods: 'github' },
    ]);

    const second = await gitHubSignIn('octo-events');
    expect(second.status).toBe(302);
    expect((await sessionOf(cookieFrom(second, SESSION))).user.id).toBe(user.id);
    const types = (await stored()).map((event) => event.type).sort();
    expect(types).toEqual(['session.created', 'session.created', 'user.created']);
  });

  test('an OpenID provider: user.created once with method oidc:<id>; a second sign-in adds none', async () => {
    await open();
    await endpoint();
    const who = { sub: `events-${(nextSub += 1)}`, email: 'ida@example.com' };
    const first = await acmeSignIn(who);
    expect(first.status).toBe(302);
    const { user } = await sessionOf(cookieFrom(first, SESSION));
    expect((await acmeSignIn(who)).status).toBe(302);
    expect((await stored('user.created')).map((event) => event.data)).toEqual([
      { userId: user.id, email: 'ida@example.com', method: 'oidc:acme', emailVerified: true },
    ]);
    expect((await stored('session.created')).map((event) => event.data.methods)).toEqual(['acme', 'acme']);
    expect(await stored('user.provider_linked')).toEqual([]);
  });

  test('email sign-in sign-up: user.created once (method email, verified) in the spending transaction; signing in again adds none', async () => {
    await open();
    await endpoint();
    const { token } = await mailedSignIn('eli@example.com');
    const first = await t.request('POST', '/api/auth/email-sign-in/verify', { json: { token } });
    expect(first.status).toBe(200);
    const { user, session } = await sessionOf(cookieFrom(first, SESSION));
    const { code } = await mailedSignIn('eli@example.com');
    expect((await t.request('POST', '/api/auth/email-sign-in/verify', { json: { email: 'eli@example.com', code } })).status).toBe(200);
    expect((await stored('user.created')).map((event) => event.data)).toEqual([
      { userId: user.id, email: 'eli@example.com', method: 'email', emailVerified: true },
    ]);
    // Created verified: nothing turned from unverified to verified.
    expect(await stored('user.email_verified')).toEqual([]);
    const sessions = (await stored('session.created')).map((event) => event.data);
    expect(sessions).toHaveLength(2);
    expect(sessions).toContainEqual({ userId: user.id, email: 'eli@example.com', sessionId: session.id, methods: 'email_link' });
    expect(sessions.map((data) => data.methods).sort()).toEqual(['email_code', 'email_link']);
  });

  test('import: one user.created (method import) per user created; running it again adds none; update mode reports the address change, disable and enable', async () => {
    await open();
    await endpoint();
    const hash = bcrypt.hashSync('Imported-Pass-42', 4);
    const lines = [
      { email: 'imp1@example.com', emailVerified: true, password: { algorithm: 'bcrypt', hash } },
      { email: 'imp2@example.com', externalId: 'ext-2' },
      { email: 'not-an-email' },
    ];
    const first = await importLines(lines);
    expect(first.status).toBe(200);
    expect(await first.json()).toMatchObject({ imported: 2, failed: [{ line: 3 }] });
    expect((await importLines(lines)).status).toBe(200);
    const created = await stored('user.created');
    expect(created.map((event) => event.data).sort((a, b) => String(a.email).localeCompare(String(b.email)))).toEqual([
      { userId: expect.any(String), email: 'imp1@example.com', method: 'import', emailVerified: true },
      { userId: expect.any(String), email: 'imp2@example.com', method: 'import', emailVerified: false },
    ]);
    const imp2 = (await t.gatehouse.stores.users.findUserByEmail('imp2@example.com'))!;

    const moved = await importLines([{ email: 'imp2-new@example.com', externalId: 'ext-2', disabled: true }], '?onConflict=update');
    expect(await moved.json()).toMatchObject({ updated: 1 });
    expect((await stored('user.email_changed')).map((event) => event.data)).toEqual([
      { userId: imp2.id, email: 'imp2-new@example.com', previousEmail: 'imp2@example.com' },
    ]);
    expect((await stored('user.disabled')).map((event) => event.data)).toEqual([{ userId: imp2.id, email: 'imp2-new@example.com', actor: 'admin' }]);
    expect((await importLines([{ email: 'imp2-new@example.com', disabled: false }], '?onConflict=update')).status).toBe(200);
    expect((await stored('user.enabled')).map((event) => event.data)).toEqual([{ userId: imp2.id, email: 'imp2-new@example.com', actor: 'admin' }]);
    // A provider sign-in linked to a user there already is a new way in; a new user's links are part of its creation.
    const linked = await importLines(
      [
        { email: 'imp2-new@example.com', providers: [{ provider: 'github', providerUserId: '9901', login: 'imp2-gh' }] },
        { email: 'imp3@example.com', providers: [{ provider: 'github', providerUserId: '9902', login: 'imp3-gh' }] },
      ],
      '?onConflict=update',
    );
    expect(await linked.json()).toMatchObject({ imported: 1, updated: 1, failed: [] });
    expect((await stored('user.provider_linked')).map((event) => event.data)).toEqual([
      { userId: imp2.id, email: 'imp2-new@example.com', provider: 'github', providerLogin: 'imp2-gh' },
    ]);
    expect(await stored('user.created')).toHaveLength(3);
  });

  // --- One test per other event ---------------------------------------------------------------------

  test('user.email_verified: once, where the flag turns true (the link); a verified address verified again reports nothing', async () => {
    await open();
    await endpoint();
    const registered = await register('vera@example.com');
    const { verificationToken } = (await registered.json()) as { verificationToken: string };
    const { user } = await sessionOf(cookieFrom(registered, SESSION));
    expect((await t.request('POST', '/api/auth/verify-email', { json: { token: verificationToken } })).status).toBe(200);
    expect((await t.request('POST', '/api/auth/verify-email', { json: { token: verificationToken } })).status).toBe(400);
    expect((await stored('user.email_verified')).map((event) => event.data)).toEqual([{ userId: user.id, email: 'vera@example.com' }]);
    // Confirmed from outside the account: its sessions end, reported with them.
    expect((await stored('session.revoked')).map((event) => event.data)).toEqual([
      { userId: user.id, email: 'vera@example.com', sessionIds: [expect.any(String)], reason: 'revoked' },
    ]);
  });

  test('user.email_verified: a provider sign-in proving the address of an unverified account', async () => {
    await open();
    const { user } = await sessionOf(cookieFrom(await register('prove@example.com', 'Squatter-Pass-1'), SESSION));
    await endpoint();
    expect((await gitHubSignIn('prove-gh', 'prove@example.com')).status).toBe(302);
    expect((await stored('user.email_verified')).map((event) => event.data)).toEqual([{ userId: user.id, email: 'prove@example.com' }]);
    expect(await stored('user.created')).toEqual([]);
    expect((await stored('user.provider_linked')).map((event) => event.data)).toEqual([
      { userId: user.id, email: 'prove@example.com', provider: 'github', providerLogin: 'prove-gh' },
    ]);
  });

  test('an email sign-in proving an unverified account: user.email_verified, and each planted way in reported as it goes', async () => {
    await open();
    const registered = await register('planted@example.com', 'Squatter-Pass-1');
    const { user, session } = await sessionOf(cookieFrom(registered, SESSION));
    const passkeyId = randomUUID();
    await t.gatehouse.stores.passkeys.addPasskey({
      id: passkeyId,
      userId: user.id,
      credentialId: 'cGxhbnRlZA',
      publicKey: 'AQ',
      counter: 0,
      transports: [],
      name: 'Planted',
      createdAt: t.clock.now(),
      lastUsedAt: null,
    });
    await endpoint();
    const { token } = await mailedSignIn('planted@example.com');
    const signedIn = await t.request('POST', '/api/auth/email-sign-in/verify', { json: { token } });
    expect(signedIn.status).toBe(200);
    const fresh = (await sessionOf(cookieFrom(signedIn, SESSION))).session.id;
    const subject = { userId: user.id, email: 'planted@example.com' };
    expect((await stored()).map((event) => [event.type, event.data])).toEqual([
      ['user.email_verified', subject],
      ['session.revoked', { ...subject, sessionIds: [session.id], reason: 'revoked' }],
      ['user.passkey_removed', { ...subject, passkeyId, name: 'Planted' }],
      ['session.created', { ...subject, sessionId: fresh, methods: 'email_link' }],
    ]);
  });

  test('user.email_changed: the confirmed link reports the new address and the previous one', async () => {
    await open();
    const { id, cookie } = await verifiedAccount('mover@example.com');
    await endpoint();
    const requested = await t.request('POST', '/api/auth/email/change', { cookie, json: { newEmail: 'moved@example.com', currentPassword: STRONG_PASSWORD } });
    const { token } = (await requested.json()) as { token: string };
    expect(await stored('user.email_changed')).toEqual([]);
    expect((await t.request('POST', '/api/auth/email/change/confirm', { cookie, json: { token } })).status).toBe(200);
    expect((await stored('user.email_changed')).map((event) => event.data)).toEqual([
      { userId: id, email: 'moved@example.com', previousEmail: 'mover@example.com' },
    ]);
    expect(await stored('user.email_verified')).toEqual([]);
  });

  test('user.password_changed (how: change) with session.revoked (reason password_changed) for the other session', async () => {
    await open();
    const { id, cookie } = await verifiedAccount('pw@example.com');
    const other = (await sessionOf(cookieFrom(await login('pw@example.com'), SESSION))).session.id;
    await endpoint();
    const changed = await t.request('POST', '/api/auth/password/change', { cookie, json: { currentPassword: STRONG_PASSWORD, newPassword: NEW_PASSWORD } });
    expect(changed.status).toBe(200);
    expect((await stored('user.password_changed')).map((event) => event.data)).toEqual([{ userId: id, email: 'pw@example.com', how: 'change' }]);
    expect((await stored('session.revoked')).map((event) => event.data)).toEqual([
      { userId: id, email: 'pw@example.com', sessionIds: [other], reason: 'password_changed' },
    ]);
  });

  test('user.password_changed (how: reset) with session.revoked (reason password_reset) for every session', async () => {
    await open();
    const { id, cookie } = await verifiedAccount('reset@example.com');
    const sessionId = (await sessionOf(cookie)).session.id;
    await endpoint();
    const requested = await t.request('POST', '/api/auth/password-reset/request', { json: { email: 'reset@example.com' } });
    const { token } = (await requested.json()) as { token: string };
    expect((await t.request('POST', '/api/auth/password-reset/confirm', { json: { token, password: NEW_PASSWORD } })).status).toBe(200);
    expect((await stored('user.password_changed')).map((event) => event.data)).toEqual([{ userId: id, email: 'reset@example.com', how: 'reset' }]);
    expect((await stored('session.revoked')).map((event) => event.data)).toEqual([
      { userId: id, email: 'reset@example.com', sessionIds: [sessionId], reason: 'password_reset' },
    ]);
  });

  test('user.mfa_enabled and user.mfa_disabled (method totp); enabling ends the other sessions (session.revoked revoked_others)', async () => {
    await open();
    const { id, cookie } = await verifiedAccount('mfa@example.com');
    const other = (await sessionOf(cookieFrom(await login('mfa@example.com'), SESSION))).session.id;
    await endpoint();
    const { secret } = (await (await t.request('POST', '/api/auth/2fa/totp/setup', { cookie, json: { currentPassword: STRONG_PASSWORD } })).json()) as {
      secret: string;
    };
    expect(await stored()).toEqual([]);
    expect((await t.request('POST', '/api/auth/2fa/totp/enable', { cookie, json: { code: totp(secret, t.clock.now().getTime()) } })).status).toBe(200);
    expect((await stored('user.mfa_enabled')).map((event) => event.data)).toEqual([{ userId: id, email: 'mfa@example.com', method: 'totp' }]);
    expect((await stored('session.revoked')).map((event) => event.data)).toEqual([
      { userId: id, email: 'mfa@example.com', sessionIds: [other], reason: 'revoked_others' },
    ]);
    expect((await t.request('POST', '/api/auth/2fa/totp/disable', { cookie, json: { currentPassword: STRONG_PASSWORD } })).status).toBe(200);
    expect((await stored('user.mfa_disabled')).map((event) => event.data)).toEqual([{ userId: id, email: 'mfa@example.com', method: 'totp' }]);
  });

  test('user.passkey_added and user.passkey_removed carry the passkey id and name', async () => {
    await open();
    const { id, cookie } = await verifiedAccount('keys@example.com');
    await endpoint();
    const options = await t.request('POST', '/api/auth/passkeys/register/options', { cookie, json: { currentPassword: STRONG_PASSWORD } });
    const challenge = cookieFrom(options, 'gatehouse_passkey_reg')!;
    const { response } = new SoftwareAuthenticator(BASE_URL).create(await options.json());
    const added = await t.request('POST', '/api/auth/passkeys/register/verify', { cookie: `${cookie}; ${challenge}`, json: { response, name: 'Laptop' } });
    expect(added.status).toBe(200);
    const { passkey } = (await added.json()) as { passkey: { id: string } };
    expect((await stored('user.passkey_added')).map((event) => event.data)).toEqual([
      { userId: id, email: 'keys@example.com', passkeyId: passkey.id, name: 'Laptop' },
    ]);
    expect((await t.request('DELETE', `/api/auth/passkeys/${passkey.id}`, { cookie, json: { currentPassword: STRONG_PASSWORD } })).status).toBe(200);
    expect((await stored('user.passkey_removed')).map((event) => event.data)).toEqual([
      { userId: id, email: 'keys@example.com', passkeyId: passkey.id, name: 'Laptop' },
    ]);
  });

  test('user.provider_linked (a verified address signs in with GitHub) and user.provider_unlinked; the link ends the other sessions', async () => {
    await open();
    const { id, cookie } = await verifiedAccount('linker@example.com');
    const before = (await sessionOf(cookie)).session.id;
    await endpoint();
    expect((await gitHubSignIn('linker-gh', 'linker@example.com')).status).toBe(302);
    expect((await stored('user.provider_linked')).map((event) => event.data)).toEqual([
      { userId: id, email: 'linker@example.com', provider: 'github', providerLogin: 'linker-gh' },
    ]);
    expect(await stored('user.created')).toEqual([]);
    expect((await stored('session.revoked')).map((event) => event.data)).toEqual([
      { userId: id, email: 'linker@example.com', sessionIds: [before], reason: 'revoked' },
    ]);
    const fresh = cookieFrom(await login('linker@example.com'), SESSION)!;
    expect((await t.request('DELETE', '/api/auth/accounts/github', { cookie: fresh, json: { currentPassword: STRONG_PASSWORD } })).status).toBe(200);
    expect((await stored('user.provider_unlinked')).map((event) => event.data)).toEqual([
      { userId: id, email: 'linker@example.com', provider: 'github', providerLogin: 'linker-gh' },
    ]);
  });

  test('user.provider_linked of a two-factor account: only once the code step succeeds', async () => {
    await open();
    const { id, cookie } = await verifiedAccount('twofa@example.com');
    const { secret } = (await (await t.request('POST', '/api/auth/2fa/totp/setup', { cookie, json: { currentPassword: STRONG_PASSWORD } })).json()) as {
      secret: string;
    };
    expect((await t.request('POST', '/api/auth/2fa/totp/enable', { cookie, json: { code: totp(secret, t.clock.now().getTime()) } })).status).toBe(200);
    await endpoint();
    const callback = await gitHubSignIn('twofa-gh', 'twofa@example.com');
    expect(callback.headers.get('location')).toBe('/login?mfa=required');
    expect(await stored()).toEqual([]);
    const challenge = cookieFrom(callback, 'gatehouse_mfa')!;
    const verified = await t.request('POST', '/api/auth/2fa/verify', { cookie: challenge, json: { code: totp(secret, t.clock.now().getTime(), 1) } });
    expect(verified.status).toBe(200);
    expect((await stored('user.provider_linked')).map((event) => event.data)).toEqual([
      { userId: id, email: 'twofa@example.com', provider: 'github', providerLogin: 'twofa-gh' },
    ]);
    expect((await stored('session.created')).map((event) => event.data.methods)).toEqual(['github+totp']);
  });

  test('user.locked: once per lock with lockedUntil, not on the refused attempts while locked; also when the notice is past its allowance', async () => {
    await open({ RATE_LIMIT_SECURITY_NOTICE: '1/24h' });
    const { id } = await verifiedAccount('locked@example.com');
    await endpoint();
    const lockAt = async (): Promise<string> => {
      for (let attempt = 0; attempt < 5; attempt += 1) expect((await login('locked@example.com', WRONG_PASSWORD)).status).toBe(401);
      const lockedAt = t.clock.now().getTime();
      expect((await login('locked@example.com', WRONG_PASSWORD)).status).toBe(429);
      expect((await login('locked@example.com')).status).toBe(429);
      return new Date(lockedAt + 15 * 60_000).toISOString();
    };
    const firstUntil = await lockAt();
    expect((await stored('user.locked')).map((event) => event.data)).toEqual([{ userId: id, email: 'locked@example.com', lockedUntil: firstUntil }]);
    t.clock.advance(16 * 60_000);
    const secondUntil = await lockAt();
    expect((await stored('user.locked')).map((event) => event.data.lockedUntil)).toEqual([firstUntil, secondUntil]);
    // The second lock's notice was past RATE_LIMIT_SECURITY_NOTICE: one email, two events.
    expect(t.sentEmails.filter((email) => email.to === 'locked@example.com' && email.text.includes('failed sign-in attempts'))).toHaveLength(1);
  });

  test('admin: user.disabled and user.enabled (actor admin), session.revoked for the disable (disabled) and for revoke-sessions (admin)', async () => {
    await open();
    const { id, cookie } = await verifiedAccount('op@example.com');
    const sessionId = (await sessionOf(cookie)).session.id;
    await endpoint();
    expect((await admin('POST', `/users/${id}/disable`)).status).toBe(200);
    // Disabling again changes nothing and reports nothing.
    expect((await admin('POST', `/users/${id}/disable`)).status).toBe(200);
    expect((await admin('POST', `/users/${id}/enable`)).status).toBe(200);
    expect((await stored('user.disabled')).map((event) => event.data)).toEqual([{ userId: id, email: 'op@example.com', actor: 'admin' }]);
    expect((await stored('user.enabled')).map((event) => event.data)).toEqual([{ userId: id, email: 'op@example.com', actor: 'admin' }]);
    const next = (await sessionOf(cookieFrom(await login('op@example.com'), SESSION))).session.id;
    expect((await admin('POST', `/users/${id}/revoke-sessions`)).status).toBe(200);
    // Nothing left to revoke: no event.
    expect((await admin('POST', `/users/${id}/revoke-sessions`)).status).toBe(200);
    expect((await stored('session.revoked')).map((event) => event.data)).toEqual([
      { userId: id, email: 'op@example.com', sessionIds: [sessionId], reason: 'disabled' },
      { userId: id, email: 'op@example.com', sessionIds: [next], reason: 'admin' },
    ]);
  });

  test('user.deleted by the owner (deleted_by_owner), with session.revoked (deleted); the events and their deliveries outlive the user', async () => {
    await open();
    const { id, cookie } = await verifiedAccount('gone@example.com');
    const sessionId = (await sessionOf(cookie)).session.id;
    await endpoint();
    expect((await t.request('POST', '/api/auth/account/delete', { cookie, json: { currentPassword: STRONG_PASSWORD } })).status).toBe(200);
    expect(await t.gatehouse.stores.users.findUserById(id)).toBeNull();
    expect((await stored('user.deleted')).map((event) => event.data)).toEqual([{ userId: id, email: 'gone@example.com', reason: 'deleted_by_owner' }]);
    expect((await stored('session.revoked')).map((event) => event.data)).toEqual([
      { userId: id, email: 'gone@example.com', sessionIds: [sessionId], reason: 'deleted' },
    ]);
    expect(await countRows('webhook_deliveries')).toBe(2);
  });

  test('user.deleted by an operator (admin) and from the verification link (declined_from_verification_link)', async () => {
    await open();
    const { id } = await verifiedAccount('op-del@example.com');
    const registered = await register('squatted@example.com', 'Squatter-Pass-1');
    const { verificationToken } = (await registered.json()) as { verificationToken: string };
    const squatted = (await sessionOf(cookieFrom(registered, SESSION))).user.id;
    await endpoint();
    expect((await admin('DELETE', `/users/${id}`)).status).toBe(200);
    expect((await t.request('POST', '/api/auth/verify-email/decline', { json: { token: verificationToken } })).status).toBe(200);
    expect((await stored('user.deleted')).map((event) => event.data)).toEqual([
      { userId: id, email: 'op-del@example.com', reason: 'admin' },
      { userId: squatted, email: 'squatted@example.com', reason: 'declined_from_verification_link' },
    ]);
    expect((await stored('session.revoked')).map((event) => event.data.reason)).toEqual(['deleted', 'deleted']);
  });

  test('session.revoked: logout, one session revoked, the others revoked — each with its ids; nothing when none was', async () => {
    await open();
    const { id, cookie } = await verifiedAccount('sess@example.com');
    const current = (await sessionOf(cookie)).session.id;
    const [a, b, c] = await Promise.all([1, 2, 3].map(async () => cookieFrom(await login('sess@example.com'), SESSION)!));
    const ids = await Promise.all([a, b, c].map(async (each) => (await sessionOf(each)).session.id));
    await endpoint();
    expect((await t.request('POST', '/api/auth/logout', { cookie: a })).status).toBe(200);
    expect((await t.request('DELETE', `/api/auth/sessions/${ids[1]}`, { cookie })).status).toBe(200);
    expect((await t.request('POST', '/api/auth/sessions/revoke-others', { cookie })).status).toBe(200);
    // Nothing left but the current one: no event for an empty revoke, nor for a logout without a session.
    expect((await t.request('POST', '/api/auth/sessions/revoke-others', { cookie })).status).toBe(200);
    expect((await t.request('POST', '/api/auth/logout', { cookie: a })).status).toBe(200);
    expect((await stored('session.revoked')).map((event) => event.data)).toEqual([
      { userId: id, email: 'sess@example.com', sessionIds: [ids[0]], reason: 'logout' },
      { userId: id, email: 'sess@example.com', sessionIds: [ids[1]], reason: 'revoked' },
      { userId: id, email: 'sess@example.com', sessionIds: [ids[2]], reason: 'revoked_others' },
    ]);
    expect(current).not.toBe(ids[2]);
  });

  test('the stores behind the bulk revokes and the disable: deleteUserSessionsReturningIds names what it deleted; setDisabledAt sets and clears', async () => {
    await open();
    const { id, cookie } = await verifiedAccount('store@example.com');
    const kept = (await sessionOf(cookie)).session.id;
    const others = await Promise.all([1, 2].map(async () => (await sessionOf(cookieFrom(await login('store@example.com'), SESSION))).session.id));
    const { stores } = t.gatehouse;
    expect((await stores.sessions.deleteUserSessionsReturningIds(id, kept)).sort()).toEqual([...others].sort());
    expect(await stores.sessions.deleteUserSessionsReturningIds(id, kept)).toEqual([]);
    expect(await stores.sessions.deleteUserSessionsReturningIds(id, null)).toEqual([kept]);
    expect(await stores.users.setDisabledAt(id, t.clock.now())).toBe(true);
    expect((await stores.users.findUserById(id))!.disabledAt).toEqual(t.clock.now());
    expect(await stores.users.setDisabledAt(id, null)).toBe(true);
    expect((await stores.users.findUserById(id))!.disabledAt).toBeNull();
    expect(await stores.users.setDisabledAt(randomUUID(), null)).toBe(false);
  });

  // --- No secret in any payload ----------------------------------------------------------------

  test('no payload holds a secret the flows handled: passwords, dev-mode tokens, TOTP secret and codes, recovery codes, session cookies, the password hash', async () => {
    await open();
    await endpoint();
    const secrets: string[] = [STRONG_PASSWORD, NEW_PASSWORD, WRONG_PASSWORD];
    const registered = await register('leak@example.com');
    const cookie = cookieFrom(registered, SESSION)!;
    const { verificationToken } = (await registered.json()) as { verificationToken: string };
    secrets.push(verificationToken, cookie.split('=')[1]!);
    await t.request('POST', '/api/auth/verify-email', { json: { token: verificationToken }, cookie });
    const { secret } = (await (await t.request('POST', '/api/auth/2fa/totp/setup', { cookie, json: { currentPassword: STRONG_PASSWORD } })).json()) as {
      secret: string;
    };
    const code = totp(secret, t.clock.now().getTime());
    const enabled = await t.request('POST', '/api/auth/2fa/totp/enable', { cookie, json: { code } });
    const { recoveryCodes } = (await enabled.json()) as { recoveryCodes: string[] };
    secrets.push(secret, code, ...recoveryCodes);
    const challenge = cookieFrom(await login('leak@example.com'), 'gatehouse_mfa')!;
    const verified = await t.request('POST', '/api/auth/2fa/verify', { cookie: challenge, json: { recoveryCode: recoveryCodes[0] } });
    expect(verified.status).toBe(200);
    secrets.push(challenge.split('=')[1]!, cookieFrom(verified, SESSION)!.split('=')[1]!);
    const changed = await t.request('POST', '/api/auth/email/change', { cookie, json: { newEmail: 'leak2@example.com', currentPassword: STRONG_PASSWORD } });
    const { token: changeToken } = (await changed.json()) as { token: string };
    secrets.push(changeToken);
    await t.request('POST', '/api/auth/email/change/confirm', { cookie, json: { token: changeToken } });
    await t.request('POST', '/api/auth/password/change', { cookie, json: { currentPassword: STRONG_PASSWORD, newPassword: NEW_PASSWORD } });
    const reset = await t.request('POST', '/api/auth/password-reset/request', { json: { email: 'leak2@example.com' } });
    const { token: resetToken } = (await reset.json()) as { token: string };
    secrets.push(resetToken);
    await t.request('POST', '/api/auth/password-reset/confirm', { json: { token: resetToken, password: STRONG_PASSWORD } });
    for (let attempt = 0; attempt < 5; attempt += 1) await login('leak2@example.com', WRONG_PASSWORD);
    const { passwordHash } = (await t.gatehouse.stores.users.findUserByEmail('leak2@example.com'))!;
    secrets.push(passwordHash!);

    const events = await stored();
    const types = new Set(events.map((event) => event.type));
    for (const type of [
      'user.created',
      'user.email_verified',
      'user.mfa_enabled',
      'session.created',
      'user.email_changed',
      'user.password_changed',
      'user.locked',
    ]) {
      expect(types).toContain(type);
    }
    const payloads = events.map((event) => event.payload).join('\n');
    for (const value of secrets) {
      expect(value.length).toBeGreaterThanOrEqual(6);
      expect(payloads).not.toContain(value);
    }
  });
});
