import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { totpCodeAt } from '../src/mfa/totp.js';
import { STRONG_PASSWORD, cookieFrom, createTestGatehouse, describeEachDialect, setCookieHeader, type TestGatehouse } from './support/harness.js';
import { base32Decode, totp } from './support/totp-oracle.js';

const SESSION = 'gatehouse_session';
const CHALLENGE = 'gatehouse_mfa';
const KEY = randomBytes(32).toString('base64');

describe('RFC 6238 Appendix B (SHA-1): the 6-digit codes are the last 6 digits of the 8-digit vectors', () => {
  const secret = 'GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ'; // base32 of "12345678901234567890"
  test.each([
    [59, '94287082'],
    [1111111109, '07081804'],
    [1111111111, '14050471'],
    [1234567890, '89005924'],
    [2000000000, '69279037'],
    [20000000000, '65353130'],
  ])('T = %i s', (seconds, vector) => {
    expect(base32Decode(secret).toString()).toBe('12345678901234567890');
    expect(totpCodeAt(secret, new Date(seconds * 1000))).toBe(vector.slice(2));
    expect(totp(secret, seconds * 1000)).toBe(vector.slice(2));
  });
});

describeEachDialect('two-factor sign-in (DESIGN §9.3)', (dialect) => {
  let t: TestGatehouse;
  let cookie: string;
  beforeEach(async () => {
    t = await createTestGatehouse(dialect, {
      env: { ENCRYPTION_KEY_BASE64: KEY, RATE_LIMIT_LOGIN: '1000/15m', RATE_LIMIT_MFA_VERIFY: '1000/15m', APP_NAME: 'Acme' },
    });
    cookie = cookieFrom(await t.request('POST', '/api/auth/register', { json: { email: 'ana@example.com', password: STRONG_PASSWORD } }), SESSION)!;
    // Two-factor needs a verified address (the review's pre-hijacking case, below).
    await t.gatehouse.stores.users.markEmailVerified((await t.gatehouse.stores.users.findUserByEmail('ana@example.com'))!.id);
  });
  afterEach(async () => {
    await t.close();
  });

  const post = (path: string, json: unknown, withCookie = cookie) => t.request('POST', `/api/auth${path}`, { cookie: withCookie, json });
  const now = () => t.clock.now().getTime();
  async function login(password = STRONG_PASSWORD): Promise<Response> {
    return t.request('POST', '/api/auth/login', { json: { email: 'ana@example.com', password } });
  }
  async function challengeCookie(): Promise<string> {
    const response = await login();
    expect(await response.json()).toEqual({ ok: true, mfaRequired: true, methods: ['totp', 'recovery_code'] });
    return cookieFrom(response, CHALLENGE)!;
  }
  async function enable(): Promise<{ secret: string; recoveryCodes: string[] }> {
    const { secret } = await (await post('/2fa/totp/setup', { currentPassword: STRONG_PASSWORD })).json();
    const enabled = await post('/2fa/totp/enable', { code: totp(secret, now()) });
    expect(enabled.status).toBe(200);
    return { secret, recoveryCodes: (await enabled.json()).recoveryCodes };
  }
  const verify = (challenge: string, body: unknown) => t.request('POST', '/api/auth/2fa/verify', { cookie: challenge, json: body });

  test('setup re-authenticates and answers the secret, the otpauth address and a QR code as SVG; nothing is enforced until enabled', async () => {
    expect((await post('/2fa/totp/setup', {})).status).toBe(403);
    const response = await post('/2fa/totp/setup', { currentPassword: STRONG_PASSWORD });
    expect(response.status).toBe(200);
    const body = await response.json();
    expect(body.secret).toMatch(/^[A-Z2-7]{32}$/);
    expect(base32Decode(body.secret)).toHaveLength(20);
    expect(body.otpauthUrl).toMatch(/^otpauth:\/\/totp\/Acme:ana%40example\.com\?/);
    const url = new URL(body.otpauthUrl);
    expect(Object.fromEntries(url.searchParams)).toMatchObject({ secret: body.secret, issuer: 'Acme', algorithm: 'SHA1', digits: '6', period: '30' });
    expect(body.qrSvg).toMatch(/^<svg [^>]*xmlns="http:\/\/www\.w3\.org\/2000\/svg"/);
    expect(body.qrSvg).not.toMatch(/style=|<script|href=/);
    expect(cookieFrom(await login(), SESSION)).toBeDefined();
    expect(await (await t.request('GET', '/api/auth/2fa', { cookie })).json()).toEqual({ totp: { enabled: false }, recoveryCodesLeft: 0 });
  });

  test('enable: a wrong code is 400 invalid_code; the right one turns it on and answers 10 distinct recovery codes once', async () => {
    const { secret } = await (await post('/2fa/totp/setup', { currentPassword: STRONG_PASSWORD })).json();
    const wrong = await post('/2fa/totp/enable', { code: totp(secret, now(), 3) });
    expect([wrong.status, (await wrong.json()).error]).toEqual([400, 'invalid_code']);
    const enabled = await post('/2fa/totp/enable', { code: totp(secret, now()) });
    const { recoveryCodes } = await enabled.json();
    expect(recoveryCodes).toHaveLength(10);
    expect(new Set(recoveryCodes).size).toBe(10);
    for (const code of recoveryCodes) expect(code).toMatch(/^[a-z2-9]{5}-[a-z2-9]{5}$/);
    expect(await (await t.request('GET', '/api/auth/2fa', { cookie })).json()).toEqual({ totp: { enabled: true }, recoveryCodesLeft: 10 });
    const again = await post('/2fa/totp/setup', { currentPassword: STRONG_PASSWORD });
    expect([again.status, (await again.json()).error]).toEqual([409, 'mfa_already_enabled']);
    expect((await t.gatehouse.stores.audit.listRecentEvents(10)).map((e) => e.type)).toContain('mfa_enabled');
  });

  test('login with 2FA: the right password gives a challenge cookie and no session; a code gives the session with methods', async () => {
    const { secret } = await enable();
    t.clock.advance(30_000);
    const response = await login();
    expect(cookieFrom(response, SESSION)).toBeUndefined();
    expect(setCookieHeader(response, CHALLENGE)).toMatch(/HttpOnly/);
    expect(setCookieHeader(response, CHALLENGE)).toMatch(/Max-Age=300/);
    const challenge = cookieFrom(response, CHALLENGE)!;
    expect((await t.request('GET', '/api/auth/session', { cookie: challenge })).status).toBe(401);

    const verified = await verify(challenge, { code: totp(secret, now()) });
    expect(verified.status).toBe(200);
    expect(setCookieHeader(verified, CHALLENGE)).toMatch(/Max-Age=0/);
    const session = cookieFrom(verified, SESSION)!;
    const { session: info } = await (await t.request('GET', '/api/auth/session', { cookie: session })).json();
    expect(info.methods).toEqual(['password', 'totp']);
    expect((await t.gatehouse.getSession(new Request('http://localhost:3000/', { headers: { cookie: session } })))?.session.methods).toEqual([
      'password',
      'totp',
    ]);
  });

  test('a code works once (replay refused), the step before and after are accepted, two steps away is not', async () => {
    const { secret } = await enable();
    t.clock.advance(60_000);
    const code = totp(secret, now());
    expect((await verify(await challengeCookie(), { code })).status).toBe(200);
    const replay = await verify(await challengeCookie(), { code });
    expect([replay.status, (await replay.json()).error]).toEqual([401, 'invalid_code']);
    t.clock.advance(60_000);
    expect((await verify(await challengeCookie(), { code: totp(secret, now(), -2) })).status).toBe(401);
    expect((await verify(await challengeCookie(), { code: totp(secret, now(), -1) })).status).toBe(200);
    expect((await verify(await challengeCookie(), { code: totp(secret, now(), 1) })).status).toBe(200);
  });

  test('the challenge: a wrong code does not spend it, a success does, and it expires after 5 minutes', async () => {
    const { secret } = await enable();
    t.clock.advance(30_000);
    const challenge = await challengeCookie();
    expect((await verify(challenge, { code: '000000' === totp(secret, now()) ? '111111' : '000000' })).status).toBe(401);
    expect((await verify(challenge, { code: totp(secret, now()) })).status).toBe(200);
    t.clock.advance(30_000);
    const spent = await verify(challenge, { code: totp(secret, now()) });
    expect([spent.status, (await spent.json()).error]).toEqual([401, 'not_authenticated']);

    const late = await challengeCookie();
    t.clock.advance(5 * 60_000 + 1000);
    const expired = await verify(late, { code: totp(secret, now()) });
    expect([expired.status, (await expired.json()).error]).toEqual([401, 'not_authenticated']);
    const forged = await verify(`${CHALLENGE}=v1.${Buffer.from('{}').toString('base64url')}.AAAA`, { code: totp(secret, now()) });
    expect(forged.status).toBe(401);
  });

  test('wrong codes count toward the login lock, and a right password in between does not clear them', async () => {
    await enable();
    t.clock.advance(30_000);
    for (let i = 0; i < 3; i++) expect((await verify(await challengeCookie(), { code: '12345x' })).status).toBe(401);
    const challenge = await challengeCookie(); // the right password again
    expect((await verify(challenge, { code: '99999a' })).status).toBe(401);
    expect((await verify(challenge, { code: '99999b' })).status).toBe(401);
    const locked = await verify(challenge, { code: '99999c' });
    expect([locked.status, (await locked.json()).error]).toEqual([429, 'account_locked']);
    expect((await login()).status).toBe(429);
    const failures = (await t.gatehouse.stores.audit.listRecentEvents(50)).filter((e) => e.type === 'mfa_failure');
    expect(failures).toHaveLength(5);
  });

  test('recovery codes: each works once, case and dashes aside; regenerating kills the old set; the session says recovery_code', async () => {
    const { recoveryCodes } = await enable();
    const [first, second] = recoveryCodes as [string, string];
    const used = await verify(await challengeCookie(), { recoveryCode: first.toUpperCase().replace('-', ' ') });
    expect(used.status).toBe(200);
    const { session } = await (await t.request('GET', '/api/auth/session', { cookie: cookieFrom(used, SESSION)! })).json();
    expect(session.methods).toEqual(['password', 'recovery_code']);
    expect((await verify(await challengeCookie(), { recoveryCode: first })).status).toBe(401);
    expect(await (await t.request('GET', '/api/auth/2fa', { cookie })).json()).toMatchObject({ recoveryCodesLeft: 9 });

    const renewed = await post('/2fa/recovery-codes', { currentPassword: STRONG_PASSWORD });
    expect((await renewed.json()).recoveryCodes).toHaveLength(10);
    expect((await verify(await challengeCookie(), { recoveryCode: second })).status).toBe(401);
    const types = (await t.gatehouse.stores.audit.listRecentEvents(50)).map((e) => e.type);
    expect(types).toEqual(expect.arrayContaining(['recovery_code_used', 'recovery_codes_regenerated']));
  });

  test('disable re-authenticates; afterwards the password alone signs in again', async () => {
    await enable();
    expect((await post('/2fa/totp/disable', { currentPassword: 'Not-The-Password-1' })).status).toBe(401);
    expect((await post('/2fa/totp/disable', { currentPassword: STRONG_PASSWORD })).status).toBe(200);
    expect(cookieFrom(await login(), SESSION)).toBeDefined();
    expect((await t.gatehouse.stores.audit.listRecentEvents(10)).map((e) => e.type)).toContain('mfa_disabled');
  });

  test('nothing usable at rest: the secret is sealed, recovery codes are digests', async () => {
    const { secret, recoveryCodes } = await enable();
    const { rows: totpRows } = await sql<{ secret_enc: string }>`select secret_enc from user_totp`.execute(t.database.kysely);
    expect(totpRows[0]!.secret_enc).toMatch(/^v1\./);
    expect(totpRows[0]!.secret_enc).not.toContain(secret);
    const { rows: codeRows } = await sql<{ code_hash: string }>`select code_hash from recovery_codes`.execute(t.database.kysely);
    expect(codeRows).toHaveLength(10);
    const stored = JSON.stringify(codeRows);
    for (const code of recoveryCodes) expect(stored).not.toContain(code.replace('-', ''));
    for (const row of codeRows) expect(row.code_hash).toMatch(/^[0-9a-f]{64}$/);
  });
});

describeEachDialect('two-factor setup without an encryption key', (dialect) => {
  test('answers 503 naming ENCRYPTION_KEY_BASE64', async () => {
    const t = await createTestGatehouse(dialect);
    try {
      const cookie = cookieFrom(await t.request('POST', '/api/auth/register', { json: { email: 'k@example.com', password: STRONG_PASSWORD } }), SESSION)!;
      const response = await t.request('POST', '/api/auth/2fa/totp/setup', { cookie, json: { currentPassword: STRONG_PASSWORD } });
      const body = await response.json();
      expect([response.status, body.error]).toEqual([503, 'service_unavailable']);
      expect(body.message).toContain('ENCRYPTION_KEY_BASE64');
    } finally {
      await t.close();
    }
  });
});

describeEachDialect('two-factor: the review’s cases', (dialect) => {
  let t: TestGatehouse;
  beforeEach(async () => {
    t = await createTestGatehouse(dialect, {
      env: { ENCRYPTION_KEY_BASE64: KEY, RATE_LIMIT_LOGIN: '1000/15m', RATE_LIMIT_MFA_VERIFY: '1000/15m', NODE_ENV: 'development' },
    });
  });
  afterEach(async () => {
    await t.close();
  });
  const now = () => t.clock.now().getTime();

  async function enabledAccount(email: string): Promise<{ cookie: string; secret: string }> {
    const cookie = cookieFrom(await t.request('POST', '/api/auth/register', { json: { email, password: STRONG_PASSWORD } }), SESSION)!;
    const user = (await (await t.request('GET', '/api/auth/session', { cookie })).json()).user as { id: string };
    await t.gatehouse.stores.users.markEmailVerified(user.id);
    const { secret } = await (await t.request('POST', '/api/auth/2fa/totp/setup', { cookie, json: { currentPassword: STRONG_PASSWORD } })).json();
    expect((await t.request('POST', '/api/auth/2fa/totp/enable', { cookie, json: { code: totp(secret, now()) } })).status).toBe(200);
    return { cookie, secret };
  }

  test('an unverified address cannot turn on two-factor (a squatter’s second factor would lock the owner out)', async () => {
    const cookie = cookieFrom(await t.request('POST', '/api/auth/register', { json: { email: 'squat@example.com', password: STRONG_PASSWORD } }), SESSION)!;
    const refused = await t.request('POST', '/api/auth/2fa/totp/setup', { cookie, json: { currentPassword: STRONG_PASSWORD } });
    expect([refused.status, (await refused.json()).error]).toEqual([403, 'email_not_verified']);
  });

  test('a password reset does not clear the count of wrong codes', async () => {
    await enabledAccount('reset2fa@example.com');
    const challenge = async () =>
      cookieFrom(await t.request('POST', '/api/auth/login', { json: { email: 'reset2fa@example.com', password: STRONG_PASSWORD } }), CHALLENGE)!;
    const wrong = async () => t.request('POST', '/api/auth/2fa/verify', { cookie: await challenge(), json: { code: 'wrong1' } });
    for (let i = 0; i < 3; i++) expect((await wrong()).status).toBe(401);
    const { token } = await (await t.request('POST', '/api/auth/password-reset/request', { json: { email: 'reset2fa@example.com' } })).json();
    expect((await t.request('POST', '/api/auth/password-reset/confirm', { json: { token, password: 'Another-Fine-Pass-8' } })).status).toBe(200);
    const challengeAfter = async () =>
      cookieFrom(await t.request('POST', '/api/auth/login', { json: { email: 'reset2fa@example.com', password: 'Another-Fine-Pass-8' } }), CHALLENGE)!;
    expect((await t.request('POST', '/api/auth/2fa/verify', { cookie: await challengeAfter(), json: { code: 'wrong2' } })).status).toBe(401);
    expect((await t.request('POST', '/api/auth/2fa/verify', { cookie: await challengeAfter(), json: { code: 'wrong3' } })).status).toBe(401);
    const locked = await t.request('POST', '/api/auth/login', { json: { email: 'reset2fa@example.com', password: 'Another-Fine-Pass-8' } });
    expect(locked.status).toBe(429);
  });

  test('two regenerations at once leave one set of 10; enabling checks the pending secret it read', async () => {
    const { cookie } = await enabledAccount('regen@example.com');
    const answers = await Promise.all(
      [1, 2].map(() => t.request('POST', '/api/auth/2fa/recovery-codes', { cookie, json: { currentPassword: STRONG_PASSWORD } })),
    );
    expect(answers.map((a) => a.status)).toEqual([200, 200]);
    expect(await (await t.request('GET', '/api/auth/2fa', { cookie })).json()).toMatchObject({ recoveryCodesLeft: 10 });

    const user = (await (await t.request('GET', '/api/auth/session', { cookie })).json()).user as { id: string };
    await t.request('POST', '/api/auth/2fa/totp/disable', { cookie, json: { currentPassword: STRONG_PASSWORD } });
    await t.request('POST', '/api/auth/2fa/totp/setup', { cookie, json: { currentPassword: STRONG_PASSWORD } });
    const pending = (await t.gatehouse.stores.totp.findTotp(user.id))!;
    expect(await t.gatehouse.stores.totp.enableTotp(user.id, `${pending.secretEnc}x`, 1, t.clock.now())).toBe(false);
    expect(await t.gatehouse.stores.totp.enableTotp(user.id, pending.secretEnc, 1, t.clock.now())).toBe(true);
  });

  test('an account without an email has its own count of wrong codes, whatever address they come from', async () => {
    const id = randomBytes(16)
      .toString('hex')
      .replace(/^(.{8})(.{4})(.{4})(.{4})(.{12})$/, '$1-$2-$3-$4-$5');
    await t.gatehouse.stores.users.createUser({ id, email: null, passwordHash: null, emailVerified: false, createdAt: t.clock.now() });
    const { issueSession } = await import('../src/session/flow.js');
    const { createSessionTokenCodec } = await import('../src/session/token.js');
    const { TEST_JWT_SECRET } = await import('./support/harness.js');
    const session = await issueSession(
      { sessions: t.gatehouse.stores.sessions, tokens: createSessionTokenCodec(TEST_JWT_SECRET), sessionExpiresInSeconds: 3600 },
      id,
      { now: t.clock.now(), ip: null, userAgent: null },
      ['github'],
    );
    const cookie = `${SESSION}=${session.token}`;
    const { secret } = await (await t.request('POST', '/api/auth/2fa/totp/setup', { cookie, json: {} })).json();
    expect((await t.request('POST', '/api/auth/2fa/totp/enable', { cookie, json: { code: totp(secret, now()) } })).status).toBe(200);
    const { createChallengeKey, issueChallenge } = await import('../src/mfa/challenge.js');
    const { secureRandom } = await import('../src/random.js');
    const challenge = () =>
      `${CHALLENGE}=${issueChallenge(createChallengeKey(TEST_JWT_SECRET), secureRandom, { userId: id, firstMethods: ['github'], returnTo: null, now: t.clock.now() }).value}`;
    for (let i = 0; i < 5; i++) {
      const wrong = await t.request('POST', '/api/auth/2fa/verify', { cookie: challenge(), json: { code: 'nope00' }, ip: `198.51.100.${i + 1}` });
      expect(wrong.status).toBe(401);
    }
    const locked = await t.request('POST', '/api/auth/2fa/verify', { cookie: challenge(), json: { code: totp(secret, now(), 1) }, ip: '198.51.100.77' });
    expect([locked.status, (await locked.json()).error]).toEqual([429, 'account_locked']);
  });
});
