import { Writable } from 'node:stream';
import { afterEach, beforeEach, expect, test } from 'vitest';
import { createLogger } from '../src/logger.js';
import { STRONG_PASSWORD, cookieFrom, createTestGatehouse, describeEachDialect, type TestGatehouse } from './support/harness.js';

describeEachDialect('HTTP edges', (dialect) => {
  let t: TestGatehouse;
  beforeEach(async () => {
    t = await createTestGatehouse(dialect);
  });
  afterEach(async () => {
    await t.close();
  });

  test('a POST whose body is not application/json answers 415 unsupported_media_type', async () => {
    for (const contentType of ['text/plain', 'application/x-www-form-urlencoded', 'application/jsonp']) {
      const response = await t.request('POST', '/api/auth/register', {
        body: JSON.stringify({ email: 'a@example.com', password: STRONG_PASSWORD }),
        headers: { 'content-type': contentType },
      });
      expect(response.status, contentType).toBe(415);
      expect(await response.json()).toMatchObject({ error: 'unsupported_media_type' });
    }
    const none = await t.request('POST', '/api/auth/login', { body: '{}' });
    expect(none.status).toBe(415);
  });

  test('application/json with a charset parameter is accepted', async () => {
    const response = await t.request('POST', '/api/auth/register', {
      body: JSON.stringify({ email: 'charset@example.com', password: STRONG_PASSWORD }),
      headers: { 'content-type': 'Application/JSON; charset=utf-8' },
    });
    expect(response.status).toBe(201);
  });

  test('a body over 16 KiB answers 413 payload_too_large and writes nothing', async () => {
    const response = await t.request('POST', '/api/auth/register', {
      json: { email: 'big@example.com', password: STRONG_PASSWORD, padding: 'x'.repeat(17 * 1024) },
    });
    expect(response.status).toBe(413);
    expect(await response.json()).toMatchObject({ error: 'payload_too_large' });
    expect(await t.gatehouse.stores.users.findUserByEmail('big@example.com')).toBeNull();
  });

  test('malformed JSON answers 400 validation_error', async () => {
    for (const body of ['{', '{"email":', 'nul', '', '\u0000']) {
      const response = await t.request('POST', '/api/auth/login', { body, headers: { 'content-type': 'application/json' } });
      expect(response.status, JSON.stringify(body)).toBe(400);
      expect(await response.json()).toMatchObject({ error: 'validation_error' });
    }
  });

  test('a body that gives a key twice, at any depth, answers 400 validation_error naming where, and writes nothing', async () => {
    const repeated: [string, string][] = [
      ['{"email":"first@example.com","password":"Correct-Horse-9","email":"second@example.com"}', 'email'],
      ['{"email":"esc@example.com","password":"Correct-Horse-9","\\u0065mail":"other@example.com"}', 'email'],
      ['{"email":"deep@example.com","password":"Correct-Horse-9","extra":{"a":1,"b":{"c":[{"d":1},{"d":2,"d":3}]}}}', 'extra.b.c.1.d'],
      ['[{"x":1},{"x":2,"y":[],"x":3}]', '1.x'],
    ];
    for (const [body, path] of repeated) {
      const response = await t.request('POST', '/api/auth/register', { body, headers: { 'content-type': 'application/json' } });
      expect(response.status, body).toBe(400);
      expect(await response.json()).toEqual({ error: 'validation_error', message: expect.any(String), issues: [{ path, message: 'is given more than once' }] });
    }
    for (const email of ['first@example.com', 'second@example.com', 'esc@example.com', 'deep@example.com']) {
      expect(await t.gatehouse.stores.users.findUserByEmail(email)).toBeNull();
    }
    // The same key in sibling objects, a key that looks like another once escaped, and a
    // repeated value are not repeated keys.
    const fine = await t.request('POST', '/api/auth/register', {
      body: '{"email":"fine@example.com","password":"Correct-Horse-9","a":{"k":"email"},"b":{"k":"email"},"c":["x","x"],"emai\\"l":1}',
      headers: { 'content-type': 'application/json' },
    });
    expect(fine.status).toBe(201);
  });

  test('a body that is not valid UTF-8 answers 400 validation_error, not a password of replacement characters', async () => {
    const json = (password: string): Uint8Array<ArrayBuffer> => new TextEncoder().encode(JSON.stringify({ email: 'bytes@example.com', password }));
    const withByte = (byte: number): Uint8Array<ArrayBuffer> => {
      const bytes = json('Correct-Horse-9X');
      bytes[bytes.indexOf(0x58)] = byte; // the X
      return bytes;
    };
    for (const body of [withByte(0xff), withByte(0xc3), withByte(0x80), new Uint8Array([...json('Correct-Horse-9'), 0xed, 0xa0, 0x80])]) {
      const response = await t.gatehouse.fetch(
        new Request('http://localhost:3000/api/auth/register', { method: 'POST', headers: { 'content-type': 'application/json' }, body }),
        { remoteAddress: '203.0.113.10' },
      );
      expect(response.status).toBe(400);
      expect(await response.json()).toEqual({
        error: 'validation_error',
        message: 'The request body is not valid UTF-8.',
        issues: [{ path: '', message: 'is not valid UTF-8' }],
      });
    }
    expect(await t.gatehouse.stores.users.findUserByEmail('bytes@example.com')).toBeNull();
    // Multi-byte UTF-8 and a leading byte-order mark are read as before.
    const bom = new Uint8Array([0xef, 0xbb, 0xbf, ...json('Correct-Horse-9é')]);
    const accepted = await t.gatehouse.fetch(
      new Request('http://localhost:3000/api/auth/register', { method: 'POST', headers: { 'content-type': 'application/json' }, body: bom }),
      { remoteAddress: '203.0.113.10' },
    );
    expect(accepted.status).toBe(201);
  });

  test('__proto__ and constructor keys change nothing', async () => {
    const response = await t.request('POST', '/api/auth/register', {
      body: '{"email":"proto@example.com","password":"Correct-Horse-9","__proto__":{"isAdmin":true},"constructor":{"prototype":{"x":1}}}',
      headers: { 'content-type': 'application/json' },
    });
    expect(response.status).toBe(201);
    expect(({} as Record<string, unknown>).isAdmin).toBeUndefined();
  });

  test('unknown /api routes answer a JSON 404 not_found', async () => {
    const response = await t.request('GET', '/api/auth/nope');
    expect(response.status).toBe(404);
    expect(await response.json()).toMatchObject({ error: 'not_found' });
  });

  test('GET /healthz and GET /readyz answer 200', async () => {
    expect(await (await t.request('GET', '/healthz')).json()).toEqual({ status: 'ok' });
    const ready = await t.request('GET', '/readyz');
    expect(ready.status).toBe(200);
  });

  test('GET /readyz tells the public only ready or unavailable; readiness() gives operators the detail; a change is logged once as a warning', async () => {
    const logs: string[] = [];
    const destination = new Writable({
      write(chunk, _encoding, done) {
        logs.push(chunk.toString());
        done();
      },
    });
    const g = await createTestGatehouse(dialect, { overrides: { logger: createLogger({ level: 'info', destination }) } });
    try {
      const ready = await g.request('GET', '/readyz');
      expect(ready.status).toBe(200);
      expect(await ready.json()).toEqual({ status: 'ready' });
      expect(await g.gatehouse.readiness()).toEqual({ status: 'ready', database: 'ok', limiter: dialect === 'postgres' ? 'postgres' : 'memory' });

      await g.database.close();
      const down = await g.request('GET', '/readyz');
      expect(down.status).toBe(503);
      expect(await down.json()).toEqual({ status: 'unavailable' });
      expect(await g.gatehouse.readiness()).toMatchObject({ status: 'unavailable', database: 'unreachable' });
      const changes = logs.map((line) => JSON.parse(line) as { level: number; msg: string }).filter((record) => record.msg.startsWith('readiness changed'));
      expect(changes).toEqual([expect.objectContaining({ level: 40, msg: 'readiness changed from ready to unavailable' })]);
    } finally {
      await g.close();
    }
  });

  test('a CORS preflight from another origin gets no grant: no other origin can call or read the API', async () => {
    const response = await t.request('OPTIONS', '/api/auth/login', {
      headers: { origin: 'https://evil.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type' },
    });
    expect(response.status).toBeLessThan(500);
    expect(response.headers.get('access-control-allow-origin')).toBeNull();
    expect(response.headers.get('access-control-allow-credentials')).toBeNull();
    expect(response.headers.get('access-control-allow-methods')).toBeNull();
  });

  test('API responses carry security headers and no CORS grant', async () => {
    const response = await t.request('GET', '/api/auth/session', { headers: { origin: 'https://evil.example' } });
    expect(response.headers.get('x-content-type-options')).toBe('nosniff');
    expect(response.headers.get('x-frame-options')).toBe('DENY');
    expect(response.headers.get('referrer-policy')).toBe('no-referrer');
    expect(response.headers.get('access-control-allow-origin')).toBeNull();
  });

  test('every kind of API answer carries the full header set, its own request id and its cookies', async () => {
    // Answers are built from a plain record of headers (src/http/answer.ts): successes, refusals
    // thrown from deep inside a flow, 404s and redirects must all come out with the same set.
    const registered = await t.request('POST', '/api/auth/register', { json: { email: 'headers@example.com', password: STRONG_PASSWORD } });
    const session = cookieFrom(registered, 'gatehouse_session')!;
    const loggedIn = await t.request('POST', '/api/auth/login', { json: { email: 'headers@example.com', password: STRONG_PASSWORD } });
    const answers: Array<[string, Response, number]> = [
      ['register', registered, 201],
      ['login', loggedIn, 200],
      ['session', await t.request('GET', '/api/auth/session', { cookie: session }), 200],
      ['no session', await t.request('GET', '/api/auth/session'), 401],
      ['bad body', await t.request('POST', '/api/auth/login', { json: { email: 'nope' } }), 400],
      ['unknown route', await t.request('GET', '/api/auth/nothing-here'), 404],
      ['logout', await t.request('POST', '/api/auth/logout', { json: {}, cookie: session }), 200],
      ['health', await t.request('GET', '/healthz'), 200],
      ['ready', await t.request('GET', '/readyz'), 200],
      ['unknown page', await t.request('GET', '/no-such-page'), 404],
    ];
    const requestIds = new Set<string>();
    for (const [name, response, status] of answers) {
      expect(response.status, name).toBe(status);
      expect(response.headers.get('content-type'), name).toBe('application/json; charset=utf-8');
      const requestId = response.headers.get('x-request-id');
      expect(requestId, name).toMatch(/^[0-9a-f-]{36}$/);
      requestIds.add(requestId!);
      expect(response.headers.get('content-security-policy'), name).toBe("default-src 'none'; frame-ancestors 'none'");
      expect(response.headers.get('cache-control'), name).toBe('no-store');
      expect(response.headers.get('x-content-type-options'), name).toBe('nosniff');
      expect(response.headers.get('cross-origin-resource-policy'), name).toBe('same-origin');
    }
    expect(requestIds.size).toBe(answers.length);
    expect(registered.headers.getSetCookie().map((c) => c.split('=')[0])).toEqual(['gatehouse_session']);
    expect(loggedIn.headers.getSetCookie().map((c) => c.split('=')[0])).toEqual(['gatehouse_session', 'gatehouse_device']);
    expect(answers[6]![1].headers.getSetCookie()).toEqual([expect.stringMatching(/^gatehouse_session=; Max-Age=0; Path=\/; HttpOnly; SameSite=Lax$/)]);
  });

  test('redirects and static assets carry the security headers too; a page keeps its own Content-Security-Policy', async () => {
    const redirect = await t.request('GET', '/');
    expect(redirect.status).toBe(302);
    const asset = await t.request('GET', '/assets/app.js');
    const page = await t.request('GET', '/login');
    for (const [name, response] of [
      ['redirect', redirect],
      ['asset', asset],
      ['page', page],
    ] as const) {
      expect(response.headers.get('x-content-type-options'), name).toBe('nosniff');
      expect(response.headers.get('x-frame-options'), name).toBe('DENY');
      expect(response.headers.get('cross-origin-resource-policy'), name).toBe('same-origin');
      expect(response.headers.get('x-request-id'), name).toMatch(/^[0-9a-f-]{36}$/);
    }
    expect(page.headers.get('content-security-policy')).toContain("script-src 'self'");
    expect(redirect.headers.get('content-security-policy')).toBe("default-src 'none'; frame-ancestors 'none'");
  });

  test('a 429 carries Retry-After beside the full header set', async () => {
    let refused: Response | undefined;
    for (let i = 0; i < 20 && refused === undefined; i++) {
      const response = await t.request('POST', '/api/auth/verify-email', { json: { token: 'x' } });
      if (response.status === 429) refused = response;
    }
    expect(refused).toBeDefined();
    expect(Number(refused!.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(refused!.headers.get('content-security-policy')).toBe("default-src 'none'; frame-ancestors 'none'");
    expect(refused!.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });
});

describeEachDialect('unexpected failures', (dialect) => {
  test('an unexpected error answers 500 internal_error with a request id and nothing internal', async () => {
    const t = await createTestGatehouse(dialect, {
      overrides: {
        hasher: {
          hash: async () => {
            throw new Error('secret internal detail at /srv/app.js:42');
          },
          verify: async () => false,
          needsRehash: () => false,
        },
      },
    });
    try {
      const response = await t.request('POST', '/api/auth/register', { json: { email: 'x@example.com', password: STRONG_PASSWORD } });
      expect(response.status).toBe(500);
      const text = await response.text();
      const body = JSON.parse(text);
      expect(body.error).toBe('internal_error');
      expect(body.requestId).toBe(response.headers.get('x-request-id'));
      expect(text).not.toContain('secret internal detail');
      expect(text).not.toContain('app.js');
    } finally {
      await t.close();
    }
  });

  test("an unexpected error is logged as a bounded summary: class, code, the message's start, top frames; never its properties", async () => {
    const lines: string[] = [];
    const destination = new Writable({
      write(chunk, _encoding, done) {
        lines.push(chunk.toString());
        done();
      },
    });
    // Shaped like a database driver's error, which carries the query's parameters and the row
    // that clashed, and an HTTP client's, which carries its request.
    class DriverError extends Error {
      override name = 'DriverError';
      code = '23505';
      parameters = ['planted-parameter-secret'];
      detail = 'Key (token)=(planted-detail-secret) already exists.';
      request = { headers: { cookie: 'gatehouse_session=planted-cookie-secret', authorization: 'Bearer planted-bearer-secret' } };
    }
    const t = await createTestGatehouse(dialect, {
      overrides: {
        logger: createLogger({ level: 'info', destination }),
        hasher: {
          hash: async () => {
            throw new DriverError(`${'a long message '.repeat(100)}planted-message-tail`, {
              cause: Object.assign(new Error('the cause'), { code: 'ECAUSE', secret: 'x' }),
            });
          },
          verify: async () => false,
          needsRehash: () => false,
        },
      },
    });
    try {
      const response = await t.request('POST', '/api/auth/register', { json: { email: 'logged@example.com', password: STRONG_PASSWORD } });
      expect(response.status).toBe(500);
      const logged = lines.filter((line) => line.includes('unhandled error'));
      expect(logged).toHaveLength(1);
      const line = logged[0]!;
      expect(line.length).toBeLessThan(4096);
      expect(line).not.toMatch(/planted|parameters|detail|cookie|authorization/);
      expect(line).not.toContain(STRONG_PASSWORD);
      const { err } = JSON.parse(line) as { err: { type: string; code: string; message: string; stack: string[]; cause: unknown } };
      expect(err).toEqual({
        type: 'DriverError',
        code: '23505',
        message: `${'a long message '.repeat(100).slice(0, 200)}…`,
        stack: expect.any(Array),
        cause: { type: 'Error', code: 'ECAUSE', message: 'the cause' },
      });
      expect(err.stack.length).toBeGreaterThan(0);
      expect(err.stack.length).toBeLessThanOrEqual(8);
      // The frame where it was thrown comes first.
      expect(err.stack[0]).toMatch(/^at .*http-edges\.test\.ts:\d+/);
    } finally {
      await t.close();
    }
  });
});

describeEachDialect('secure by the URL', (dialect) => {
  test('an https BASE_URL sends HSTS and Secure __Host- cookies without NODE_ENV=production; a plain-http one sends neither', async () => {
    const https = await createTestGatehouse(dialect, { env: { BASE_URL: 'https://auth.example.com' } });
    const http = await createTestGatehouse(dialect);
    try {
      const secure = await https.request('POST', '/api/auth/register', { json: { email: 'tls@example.com', password: STRONG_PASSWORD } });
      expect(secure.status).toBe(201);
      expect(secure.headers.get('strict-transport-security')).toBe('max-age=31536000; includeSubDomains');
      expect(secure.headers.getSetCookie()[0]).toMatch(/^__Host-gatehouse_session=.*; Secure/);
      expect((await https.request('GET', '/login')).headers.get('strict-transport-security')).toBe('max-age=31536000; includeSubDomains');
      expect((await https.request('GET', '/healthz')).headers.get('strict-transport-security')).toBe('max-age=31536000; includeSubDomains');

      const plain = await http.request('POST', '/api/auth/register', { json: { email: 'plain@example.com', password: STRONG_PASSWORD } });
      expect(plain.headers.get('strict-transport-security')).toBeNull();
      expect(plain.headers.getSetCookie()[0]).toMatch(/^gatehouse_session=/);
      expect(plain.headers.getSetCookie()[0]).not.toMatch(/; Secure/);
    } finally {
      await https.close();
      await http.close();
    }
  });
});
