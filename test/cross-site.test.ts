/**
 * Cross-site request rules (DESIGN §9.1) over HTTP: bodyless POSTs as a client written from the
 * spec sends them, refusals by Sec-Fetch-Site and Origin before any work, and CORS for the
 * trusted origins only.
 */
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { ConfigError, loadConfig } from '../src/config.js';
import { createCountingHasher, type CountingHasher } from './support/counting-hasher.js';
import { STRONG_PASSWORD, cookieFrom, createTestGatehouse, describeEachDialect, type TestGatehouse } from './support/harness.js';

const COOKIE = 'gatehouse_session';
const OWN = 'http://localhost:3000';
const TRUSTED = 'https://app.example.com';

describeEachDialect('cross-site rules', (dialect) => {
  let t: TestGatehouse;
  let counting: CountingHasher;
  let cookie: string;

  beforeEach(async () => {
    counting = createCountingHasher();
    t = await createTestGatehouse(dialect, { env: { TRUSTED_ORIGINS: `${TRUSTED}, https://admin.example.com` }, overrides: { hasher: counting.hasher } });
    const registered = await t.request('POST', '/api/auth/register', { json: { email: 'sam@example.com', password: STRONG_PASSWORD } });
    expect(registered.status).toBe(201);
    cookie = cookieFrom(registered, COOKIE)!;
  });
  afterEach(async () => {
    await t.close();
    await counting.close();
  });

  const session = () => t.request('GET', '/api/auth/session', { cookie });
  const auditRows = async () => (await t.database.kysely.selectFrom('audit_events').select('event_type').execute()).map((row) => row.event_type);

  test("the spec's bodyless POSTs need no Content-Type: resend-verification, then logout", async () => {
    const resent = await t.request('POST', '/api/auth/resend-verification', { cookie });
    expect(resent.status).toBe(200);
    const loggedOut = await t.request('POST', '/api/auth/logout', { cookie });
    expect(loggedOut.status).toBe(200);
    expect(await loggedOut.json()).toEqual({ ok: true });
    expect((await session()).status).toBe(401);
  });

  test('a bodyless POST may still say application/json, or carry {}; a body of another type is 415', async () => {
    expect((await t.request('POST', '/api/auth/resend-verification', { cookie, headers: { 'content-type': 'application/json' } })).status).toBe(200);
    for (const contentType of ['text/plain', 'application/x-www-form-urlencoded']) {
      const refused = await t.request('POST', '/api/auth/logout', { cookie, body: 'a=1', headers: { 'content-type': contentType } });
      expect(refused.status, contentType).toBe(415);
      expect(await refused.json()).toMatchObject({ error: 'unsupported_media_type' });
    }
    expect((await session()).status).toBe(200);
    const malformed = await t.request('POST', '/api/auth/logout', { cookie, body: '{', headers: { 'content-type': 'application/json' } });
    expect(malformed.status).toBe(400);
    expect((await session()).status).toBe(200);
    expect((await t.request('POST', '/api/auth/logout', { cookie, json: {} })).status).toBe(200);
    expect((await session()).status).toBe(401);
  });

  test('an endpoint that takes a body: none at all is 400 with the missing fields; another type 415; JSON over 16 KiB 413', async () => {
    const empty = await t.request('POST', '/api/auth/login');
    expect(empty.status).toBe(400);
    const body = await empty.json();
    expect(body.error).toBe('validation_error');
    expect(body.issues.map((issue: { path: string }) => issue.path).sort()).toEqual(['email', 'password']);
    const form = await t.request('POST', '/api/auth/login', {
      body: 'email=sam%40example.com',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(form.status).toBe(415);
    const big = await t.request('POST', '/api/auth/login', { json: { email: 'sam@example.com', password: 'x'.repeat(17 * 1024) } });
    expect(big.status).toBe(413);
  });

  test('Sec-Fetch-Site: cross-site is refused 403 forbidden_origin before any work: no hash, no limit counted, no audit row', async () => {
    const before = { hashes: counting.hashes() + counting.verifications(), audit: await auditRows() };
    for (let i = 0; i < 25; i += 1) {
      const refused = await t.request('POST', '/api/auth/login', {
        json: { email: 'sam@example.com', password: 'wrong-password-1' },
        headers: { 'sec-fetch-site': 'cross-site' },
      });
      expect(refused.status).toBe(403);
      const error = await refused.json();
      expect(error).toMatchObject({ error: 'forbidden_origin' });
      expect(typeof error.message).toBe('string');
      expect(refused.headers.get('content-type')).toMatch(/^application\/json/);
      expect(refused.headers.get('x-content-type-options')).toBe('nosniff');
    }
    expect(counting.hashes() + counting.verifications()).toBe(before.hashes);
    expect(await auditRows()).toEqual(before.audit);
    // 25 refusals counted nothing: the login limit (10) and the lock (5) are untouched.
    const login = await t.request('POST', '/api/auth/login', { json: { email: 'sam@example.com', password: STRONG_PASSWORD } });
    expect(login.status).toBe(200);
  });

  test('every state-changing method is refused cross-site; GET and HEAD never are', async () => {
    for (const method of ['POST', 'PUT', 'PATCH', 'DELETE']) {
      const refused = await t.request(method, '/api/auth/logout', { cookie, headers: { 'sec-fetch-site': 'cross-site' } });
      expect(refused.status, method).toBe(403);
      const foreign = await t.request(method, '/api/auth/logout', { cookie, headers: { origin: 'https://evil.example' } });
      expect(foreign.status, method).toBe(403);
    }
    expect((await session()).status).toBe(200);
    const get = await t.request('GET', '/api/auth/session', { cookie, headers: { 'sec-fetch-site': 'cross-site', origin: 'https://evil.example' } });
    expect(get.status).toBe(200);
    const head = await t.request('HEAD', '/api/auth/session', { cookie, headers: { 'sec-fetch-site': 'cross-site' } });
    expect(head.status).not.toBe(403);
  });

  test('an Origin that is neither BASE_URL\'s nor trusted is refused, whatever Sec-Fetch-Site says; "null" too', async () => {
    for (const origin of ['https://evil.example', 'http://localhost:3001', 'https://localhost:3000', 'null', 'https://app.example.com.evil.example']) {
      for (const fetchSite of [undefined, 'same-origin', 'same-site', 'none']) {
        const headers: Record<string, string> = { origin };
        if (fetchSite) headers['sec-fetch-site'] = fetchSite;
        const refused = await t.request('POST', '/api/auth/logout', { cookie, headers });
        expect(refused.status, `${origin} ${fetchSite}`).toBe(403);
        expect((await refused.json()).error).toBe('forbidden_origin');
      }
    }
    expect((await session()).status).toBe(200);
  });

  test("BASE_URL's origin and a trusted origin pass whatever Sec-Fetch-Site says; a request with neither header passes", async () => {
    const own = await t.request('POST', '/api/auth/resend-verification', { cookie, headers: { origin: OWN, 'sec-fetch-site': 'same-origin' } });
    expect(own.status).toBe(200);
    const trusted = await t.request('POST', '/api/auth/resend-verification', { cookie, headers: { origin: TRUSTED, 'sec-fetch-site': 'cross-site' } });
    expect(trusted.status).toBe(200);
    const plain = await t.request('POST', '/api/auth/logout', { cookie });
    expect(plain.status).toBe(200);
  });

  test('a trusted origin gets CORS with credentials, never *; other origins get none; every API answer varies by Origin', async () => {
    const trusted = await t.request('GET', '/api/auth/session', { cookie, headers: { origin: TRUSTED } });
    expect(trusted.status).toBe(200);
    expect(trusted.headers.get('access-control-allow-origin')).toBe(TRUSTED);
    expect(trusted.headers.get('access-control-allow-credentials')).toBe('true');
    expect(trusted.headers.get('vary')).toMatch(/Origin/);
    expect(trusted.headers.get('access-control-expose-headers')).toMatch(/Retry-After/);

    const other = await t.request('GET', '/api/auth/session', { cookie, headers: { origin: 'https://evil.example' } });
    expect(other.status).toBe(200);
    expect(other.headers.get('access-control-allow-origin')).toBeNull();
    expect(other.headers.get('access-control-allow-credentials')).toBeNull();
    expect(other.headers.get('vary')).toMatch(/Origin/);

    const refusedLogin = await t.request('POST', '/api/auth/login', {
      json: { email: 'sam@example.com', password: 'wrong-password-1' },
      headers: { origin: TRUSTED },
    });
    expect(refusedLogin.status).toBe(401);
    expect(refusedLogin.headers.get('access-control-allow-origin')).toBe(TRUSTED);
  });

  test('preflight: a trusted origin gets 204 for our methods and Content-Type; another origin 403', async () => {
    const preflight = await t.request('OPTIONS', '/api/auth/login', {
      headers: { origin: TRUSTED, 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type' },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-origin')).toBe(TRUSTED);
    expect(preflight.headers.get('access-control-allow-credentials')).toBe('true');
    expect(preflight.headers.get('access-control-allow-methods')).toMatch(/POST/);
    expect(preflight.headers.get('access-control-allow-methods')).toMatch(/DELETE/);
    expect(preflight.headers.get('access-control-allow-headers')?.toLowerCase()).toBe('content-type');
    expect(preflight.headers.get('vary')).toMatch(/Origin/);

    const foreign = await t.request('OPTIONS', '/api/auth/login', { headers: { origin: 'https://evil.example', 'access-control-request-method': 'POST' } });
    expect(foreign.status).toBe(403);
    expect(foreign.headers.get('access-control-allow-origin')).toBeNull();
    expect((await foreign.json()).error).toBe('forbidden_origin');
  });
});

describeEachDialect('cross-site rules without TRUSTED_ORIGINS', (dialect) => {
  let t: TestGatehouse;
  beforeEach(async () => {
    t = await createTestGatehouse(dialect);
  });
  afterEach(async () => {
    await t.close();
  });

  test('no CORS header at all, not even Vary, and no preflight', async () => {
    const answer = await t.request('GET', '/api/auth/session', { headers: { origin: TRUSTED } });
    expect(answer.headers.get('access-control-allow-origin')).toBeNull();
    expect(answer.headers.get('vary')).toBeNull();
    const preflight = await t.request('OPTIONS', '/api/auth/login', { headers: { origin: TRUSTED, 'access-control-request-method': 'POST' } });
    expect(preflight.headers.get('access-control-allow-origin')).toBeNull();
    const post = await t.request('POST', '/api/auth/register', { json: { email: 'a@example.com', password: STRONG_PASSWORD }, headers: { origin: TRUSTED } });
    expect(post.status).toBe(403);
  });
});

describe('TRUSTED_ORIGINS', () => {
  const problemsOf = (value: string): string[] => {
    try {
      loadConfig({ TRUSTED_ORIGINS: value });
      return [];
    } catch (error) {
      if (error instanceof ConfigError) return error.problems;
      throw error;
    }
  };

  test('origins are read, trimmed, de-duplicated and normalised as browsers send them', () => {
    const config = loadConfig({ TRUSTED_ORIGINS: 'https://app.example.com, https://ADMIN.example.com:443/ ,http://localhost:5173,https://app.example.com' });
    expect(config.trustedOrigins).toEqual(['https://app.example.com', 'https://admin.example.com', 'http://localhost:5173']);
    expect(loadConfig({}).trustedOrigins).toEqual([]);
  });

  test('anything that is not an origin stops the start, naming the variable', () => {
    for (const bad of [
      '*',
      'https://*.example.com',
      'app.example.com',
      'https://app.example.com/path',
      'https://app.example.com?x=1',
      'ftp://app.example.com',
      'https://user@app.example.com',
      'null',
    ]) {
      const problems = problemsOf(bad);
      expect(problems, bad).toHaveLength(1);
      expect(problems[0], bad).toMatch(/^TRUSTED_ORIGINS: /);
    }
  });
});
