/** Device cookies (OWASP "Slow Down Online Guessing Attacks with Device Cookies"). */
import { afterEach, describe, expect, test } from 'vitest';
import { createDeviceTokenKey, issueDeviceToken, readDeviceToken } from '../src/limits/device-token.js';
import { secureRandom } from '../src/random.js';
import {
  STRONG_PASSWORD,
  TEST_JWT_SECRET,
  cookieFrom,
  createTestGatehouse,
  describeEachDialect,
  setCookieHeader,
  type TestGatehouse,
} from './support/harness.js';

const DEVICE = 'gatehouse_device';
const WRONG = 'Wrong-Password-1';

describe('device tokens', () => {
  const key = createDeviceTokenKey(TEST_JWT_SECRET);

  test('issueDeviceToken() / readDeviceToken(): valid for the email it was issued for, and only that one; each token has its own nonce', () => {
    const first = issueDeviceToken(key, 'dev@example.com', secureRandom);
    const second = issueDeviceToken(key, 'dev@example.com', secureRandom);
    expect(readDeviceToken(key, first, 'dev@example.com')?.nonce).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect(readDeviceToken(key, first, 'dev@example.com')?.nonce).not.toBe(readDeviceToken(key, second, 'dev@example.com')?.nonce);
    expect(readDeviceToken(key, first, 'other@example.com')).toBeNull();
  });

  test('the token carries no email in clear: not in any part, not in base64url', () => {
    const email = 'dev.person@example.com';
    const token = issueDeviceToken(key, email, secureRandom);
    const decodedParts = token.split('.').map((part) => Buffer.from(part, 'base64url').toString('latin1'));
    for (const text of [token, ...decodedParts]) {
      expect(text).not.toContain('dev.person');
      expect(text).not.toContain('example.com');
    }
  });

  test('readDeviceToken() refuses a changed tag, a changed nonce, another key, a v1 token and garbage', () => {
    const token = issueDeviceToken(key, 'dev@example.com', secureRandom);
    const [version, , nonce, mac] = token.split('.');
    const otherTag = issueDeviceToken(key, 'mallory@example.com', secureRandom).split('.')[1];
    expect(readDeviceToken(key, `${version}.${otherTag}.${nonce}.${mac}`, 'mallory@example.com')).toBeNull();
    expect(readDeviceToken(key, token.replace(nonce!, 'A'.repeat(22)), 'dev@example.com')).toBeNull();
    expect(readDeviceToken(createDeviceTokenKey(`${TEST_JWT_SECRET}x`), token, 'dev@example.com')).toBeNull();
    const v1 = `v1.${Buffer.from('dev@example.com').toString('base64url')}.${nonce}.${mac}`;
    for (const garbage of ['', 'v2', 'v2...', v1, `v3.${token.slice(3)}`, `${token}.x`]) expect(readDeviceToken(key, garbage, 'dev@example.com')).toBeNull();
  });

  test('the key is derived from the JWT secret, not the secret itself', () => {
    expect(Buffer.from(key).equals(Buffer.from(TEST_JWT_SECRET))).toBe(false);
    expect(key.length).toBe(32);
  });
});

describeEachDialect('device cookie', (dialect) => {
  let t: TestGatehouse | undefined;
  afterEach(async () => {
    await t?.close();
    t = undefined;
  });
  const start = async (env: Record<string, string> = {}): Promise<TestGatehouse> => {
    t = await createTestGatehouse(dialect, { env });
    await t.request('POST', '/api/auth/register', { json: { email: 'owner@example.com', password: STRONG_PASSWORD }, ip: '192.0.2.200' });
    return t;
  };
  const login = (g: TestGatehouse, password: string, options: { ip?: string; cookie?: string; email?: string } = {}) =>
    g.request('POST', '/api/auth/login', {
      json: { email: options.email ?? 'owner@example.com', password },
      ip: options.ip ?? '198.51.100.1',
      ...(options.cookie ? { cookie: options.cookie } : {}),
    });

  test('a successful login sets an HttpOnly, SameSite=Lax device cookie for 180 days, not Secure outside production', async () => {
    const g = await start();
    const response = await login(g, STRONG_PASSWORD);
    const header = setCookieHeader(response, DEVICE);
    expect(header).toMatch(/; HttpOnly/);
    expect(header).toMatch(/; SameSite=Lax/);
    expect(header).toMatch(/; Path=\//);
    expect(header).toMatch(/; Max-Age=15552000/);
    expect(header).not.toMatch(/; Secure/);
    // Failures and register do not hand one out.
    expect(setCookieHeader(await login(g, WRONG), DEVICE)).toBeUndefined();
  });

  test('a new nonce at every login', async () => {
    const g = await start();
    const first = cookieFrom(await login(g, STRONG_PASSWORD), DEVICE)!;
    const second = cookieFrom(await login(g, STRONG_PASSWORD, { cookie: first }), DEVICE)!;
    expect(second).not.toBe(first);
  });

  test('an email locked by guesses from elsewhere still lets the browser with a device cookie in', async () => {
    const g = await start();
    const device = cookieFrom(await login(g, STRONG_PASSWORD, { ip: '198.51.100.1' }), DEVICE)!;
    for (let i = 1; i <= 5; i++) await login(g, WRONG, { ip: `203.0.113.${i}` });
    expect((await login(g, STRONG_PASSWORD, { ip: '198.51.100.2' })).status).toBe(429);
    expect((await login(g, STRONG_PASSWORD, { ip: '198.51.100.2', cookie: device })).status).toBe(200);
    // The lock still holds for everyone else.
    expect((await login(g, STRONG_PASSWORD, { ip: '198.51.100.3' })).status).toBe(429);
  });

  test("a login through the device lane also clears the email's failure count (SPEC §8)", async () => {
    const g = await start();
    const device = cookieFrom(await login(g, STRONG_PASSWORD, { ip: '198.51.100.1' }), DEVICE)!;
    for (let i = 1; i <= 4; i++) await login(g, WRONG, { ip: `203.0.113.${i}` });
    expect((await login(g, STRONG_PASSWORD, { ip: '198.51.100.2', cookie: device })).status).toBe(200);
    // Four more failures from elsewhere: the count started again, so no lock yet.
    for (let i = 5; i <= 8; i++) expect((await login(g, WRONG, { ip: `203.0.113.${i}` })).status).toBe(401);
    expect((await login(g, STRONG_PASSWORD, { ip: '198.51.100.3' })).status).toBe(200);
  });

  test("the browser's own failures are counted and locked on their own", async () => {
    const g = await start();
    const device = cookieFrom(await login(g, STRONG_PASSWORD), DEVICE)!;
    for (let i = 1; i <= 5; i++) expect((await login(g, WRONG, { cookie: device, ip: `198.51.100.${10 + i}` })).status).toBe(401);
    const locked = await login(g, STRONG_PASSWORD, { cookie: device, ip: '198.51.100.20' });
    expect(locked.status).toBe(429);
    expect((await locked.json()).error).toBe('account_locked');
    // Its failures did not count against the email: a browser without the cookie is not locked.
    expect((await login(g, STRONG_PASSWORD, { ip: '198.51.100.21' })).status).toBe(200);
    g.clock.advance(15 * 60_000);
    expect((await login(g, STRONG_PASSWORD, { cookie: device, ip: '198.51.100.20' })).status).toBe(200);
  });

  test('a device cookie for another email, or a forged one, counts for nothing', async () => {
    const g = await start();
    await g.request('POST', '/api/auth/register', { json: { email: 'other@example.com', password: STRONG_PASSWORD }, ip: '192.0.2.201' });
    const otherDevice = cookieFrom(await login(g, STRONG_PASSWORD, { email: 'other@example.com' }), DEVICE)!;
    const ownDevice = cookieFrom(await login(g, STRONG_PASSWORD), DEVICE)!;
    const forged = ownDevice.replace(/\.[^.]+$/, '.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA');
    for (let i = 1; i <= 5; i++) await login(g, WRONG, { ip: `203.0.113.${i}` });
    expect((await login(g, STRONG_PASSWORD, { ip: '198.51.100.30', cookie: otherDevice })).status).toBe(429);
    expect((await login(g, STRONG_PASSWORD, { ip: '198.51.100.31', cookie: forged })).status).toBe(429);
  });

  test('with an https BASE_URL (production or not) the cookie is Secure and named __Host-gatehouse_device', async () => {
    const g = await start({ BASE_URL: 'https://auth.example.com' });
    const header = setCookieHeader(await login(g, STRONG_PASSWORD), '__Host-gatehouse_device');
    expect(header).toMatch(/; Secure/);
    expect(header).toMatch(/; Path=\//);
    expect(header).not.toMatch(/; Domain=/);
  });
});
