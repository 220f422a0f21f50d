import { afterEach, beforeEach, expect, test } from 'vitest';
import { decodeJwt, decodeProtectedHeader } from 'jose';
import { STRONG_PASSWORD, cookieFrom, createTestGatehouse, describeEachDialect, setCookieHeader, type TestGatehouse } from './support/harness.js';

const COOKIE = 'gatehouse_session';

describeEachDialect('register and login', (dialect) => {
  let t: TestGatehouse;
  beforeEach(async () => {
    t = await createTestGatehouse(dialect);
  });
  afterEach(async () => {
    await t.close();
  });

  const register = (email: string, password = STRONG_PASSWORD) => t.request('POST', '/api/auth/register', { json: { email, password } });
  const login = (email: string, password = STRONG_PASSWORD, ip?: string) =>
    t.request('POST', '/api/auth/login', { json: { email, password }, ...(ip ? { ip } : {}) });

  test('POST /register answers 201 { ok: true, message } and sets an HttpOnly, SameSite=Lax session cookie', async () => {
    const response = await register('alice@example.com');
    expect(response.status).toBe(201);
    const body = await response.json();
    expect(Object.keys(body).sort()).toEqual(['message', 'ok']);
    expect(body.ok).toBe(true);
    expect(body.message).toMatch(/verify/);
    const header = setCookieHeader(response, COOKIE);
    expect(header).toBeDefined();
    expect(header).toMatch(/; HttpOnly/);
    expect(header).toMatch(/; SameSite=Lax/);
    expect(header).toMatch(/; Path=\//);
    expect(header).toMatch(/; Max-Age=86400/);
    expect(header).not.toMatch(/; Secure/);
  });

  test('the session JWT is HS256 with sub, sid, iat and exp = iat + SESSION_EXPIRES_IN', async () => {
    const response = await register('claims@example.com');
    const token = cookieFrom(response, COOKIE)!.split('=')[1]!;
    expect(decodeProtectedHeader(token).alg).toBe('HS256');
    const claims = decodeJwt(token);
    const session = await (await t.request('GET', '/api/auth/session', { cookie: cookieFrom(response, COOKIE) })).json();
    expect(claims.sub).toBe(session.user.id);
    expect(claims.sid).toBe(session.session.id);
    expect(claims.iat).toBe(Math.floor(t.clock.now().getTime() / 1000));
    expect(claims.exp).toBe(claims.iat! + 86400);
  });

  test('POST /register trims and lower-cases the email', async () => {
    const response = await register('  Bob@Example.COM ');
    expect(response.status).toBe(201);
    const session = await (await t.request('GET', '/api/auth/session', { cookie: cookieFrom(response, COOKIE) })).json();
    expect(session.user.email).toBe('bob@example.com');
    expect(session.user.emailVerified).toBe(false);
    expect(session.user.lastLoginAt).toBeNull();
  });

  test('POST /register answers 409 email_exists for an email taken in any letter case', async () => {
    expect((await register('carol@example.com')).status).toBe(201);
    const response = await register('CAROL@example.com');
    expect(response.status).toBe(409);
    expect(await response.json()).toMatchObject({ error: 'email_exists' });
  });

  test('two simultaneous registrations of one email: one 201 and one 409, never a 500', async () => {
    const statuses = (await Promise.all([register('race@example.com'), register('Race@example.com')])).map((r) => r.status);
    expect(statuses.sort()).toEqual([201, 409]);
  });

  test('POST /register answers 400 with an issue for each broken password rule', async () => {
    const cases: Array<[string, string[]]> = [
      ['Sh0rt!', ['must be at least 8 characters']],
      ['alllowercase1!', ['must contain an uppercase letter']],
      ['ALLUPPERCASE1!', ['must contain a lowercase letter']],
      ['NoDigitsHere!', ['must contain a digit']],
      ['NoSpecial123', ['must contain a special character']],
      [`Aa1!${'x'.repeat(125)}`, ['must be at most 128 characters']],
      ['abc', ['must be at least 8 characters', 'must contain an uppercase letter', 'must contain a digit', 'must contain a special character']],
    ];
    for (const [password, messages] of cases) {
      const response = await register('rules@example.com', password);
      expect(response.status, password).toBe(400);
      const body = await response.json();
      expect(body.error).toBe('validation_error');
      expect(body.issues.map((i: { message: string }) => i.message).sort()).toEqual([...messages].sort());
      expect(body.issues.every((i: { path: string }) => i.path === 'password')).toBe(true);
    }
  });

  test('passwords of exactly 8 and exactly 128 characters, in any script, are accepted', async () => {
    expect((await register('eight@example.com', 'Aa1!aaaa')).status).toBe(201);
    expect((await register('max@example.com', `Aa1!${'x'.repeat(124)}`)).status).toBe(201);
    // 128 characters of which most are 3-byte UTF-8 (384 bytes): far past bcrypt's 72 bytes.
    const cyrillic = `Жж1!${'ж'.repeat(124)}`;
    expect((await register('cyrillic@example.com', cyrillic)).status).toBe(201);
    expect((await login('cyrillic@example.com', cyrillic)).status).toBe(200);
  });

  test('every byte counts: passwords that differ only after byte 72 are different passwords', async () => {
    const prefix = `Aa1!${'a'.repeat(80)}`;
    expect((await register('long@example.com', `${prefix}X`)).status).toBe(201);
    expect((await login('long@example.com', `${prefix}Y`)).status).toBe(401);
    expect((await login('long@example.com', `${prefix}X`)).status).toBe(200);
  });

  test('passwords are NFKC-normalised: full-width and ASCII forms are one password', async () => {
    expect((await register('nfkc@example.com', 'Ｇａｔｅ－Ｋｅｅｐｅｒ１！')).status).toBe(201);
    expect((await login('nfkc@example.com', 'Gate-Keeper1!')).status).toBe(200);
  });

  test('POST /register answers 400 for malformed, over-long and missing emails', async () => {
    for (const email of ['not-an-email', 'a@', '', `${'a'.repeat(250)}@example.com`]) {
      const response = await register(email);
      expect(response.status, email).toBe(400);
      const body = await response.json();
      expect(body.error).toBe('validation_error');
      expect(body.issues[0].path).toBe('email');
    }
    const missing = await t.request('POST', '/api/auth/register', { json: { password: STRONG_PASSWORD } });
    expect(missing.status).toBe(400);
    expect((await missing.json()).issues[0].path).toBe('email');
  });

  test('POST /register answers 400 for wrong types, arrays and null bodies', async () => {
    for (const json of [
      { email: 42, password: STRONG_PASSWORD },
      { email: 'x@example.com', password: ['a'] },
      [],
      null,
      'text',
      { email: { $ne: null }, password: STRONG_PASSWORD },
    ]) {
      const response = await t.request('POST', '/api/auth/register', { json });
      expect(response.status, JSON.stringify(json)).toBe(400);
      expect((await response.json()).error).toBe('validation_error');
    }
  });

  test('POST /login answers 200 { ok: true }, sets the cookie and records lastLoginAt', async () => {
    await register('dave@example.com');
    t.clock.advance(60_000);
    const response = await login('DAVE@example.com ');
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ ok: true });
    const session = await (await t.request('GET', '/api/auth/session', { cookie: cookieFrom(response, COOKIE) })).json();
    expect(session.user.lastLoginAt).toBe(t.clock.now().toISOString());
  });

  test('POST /login answers the same 401 invalid_credentials for a wrong password and an unknown email', async () => {
    await register('erin@example.com');
    const wrong = await login('erin@example.com', 'Wrong-Password-1');
    const unknown = await login('nobody@example.com', 'Wrong-Password-1');
    expect(wrong.status).toBe(401);
    expect(unknown.status).toBe(401);
    const wrongBody = await wrong.json();
    expect(wrongBody).toEqual(await unknown.json());
    expect(wrongBody.error).toBe('invalid_credentials');
    expect(cookieFrom(wrong, COOKIE)).toBeUndefined();
  });

  test('POST /login does not check the password rules: a rule-breaking password is just wrong', async () => {
    await register('frank@example.com');
    const response = await login('frank@example.com', 'x');
    expect(response.status).toBe(401);
  });

  test('POST /login answers 400 for a missing password or malformed email', async () => {
    expect((await t.request('POST', '/api/auth/login', { json: { email: 'a@example.com' } })).status).toBe(400);
    expect((await login('nope', STRONG_PASSWORD)).status).toBe(400);
    expect((await login('a@example.com', '')).status).toBe(400);
  });

  test('audit rows: user_created, login_success and login_failure with the reason, IP and user agent', async () => {
    await t.request('POST', '/api/auth/register', {
      json: { email: 'gina@example.com', password: STRONG_PASSWORD },
      headers: { 'user-agent': 'TestAgent/1.0' },
      ip: '198.51.100.7',
    });
    await login('gina@example.com');
    await login('gina@example.com', 'Wrong-Password-1');
    await login('ghost@example.com', 'Wrong-Password-1');
    const events = (await t.gatehouse.stores.audit.listRecentEvents(10)).reverse();
    expect(events.map((e) => e.type)).toEqual(['user_created', 'login_success', 'login_failure', 'login_failure']);
    const [created, success, wrong, unknown] = events;
    expect(created).toMatchObject({ ip: '198.51.100.7', userAgent: 'TestAgent/1.0', metadata: { email: 'gina@example.com' } });
    expect(created!.userId).toBe(success!.userId);
    expect(created!.at.getTime()).toBe(t.clock.now().getTime());
    expect(wrong).toMatchObject({ userId: created!.userId, metadata: { email: 'gina@example.com', reason: 'wrong_password' } });
    expect(unknown).toMatchObject({ userId: null, metadata: { email: 'ghost@example.com', reason: 'unknown_email' } });
    const serialized = JSON.stringify(events);
    expect(serialized).not.toContain(STRONG_PASSWORD);
    expect(serialized).not.toContain('Wrong-Password-1');
  });
});
