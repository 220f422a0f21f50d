/**
 * Hostile input, generated: every JSON endpoint gets random and crafted bodies, headers and
 * cookies. Whatever arrives, the answer is never a 5xx, always the JSON error shape, and a
 * refused request writes nothing.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { startFakeGitHub, type FakeGitHub } from './support/fake-github.js';
import { STRONG_PASSWORD, createTestGatehouse, describeEachDialect, type TestGatehouse } from './support/harness.js';

const ENDPOINTS: Array<{ method: string; path: string }> = [
  { method: 'POST', path: '/api/auth/register' },
  { method: 'POST', path: '/api/auth/login' },
  { method: 'POST', path: '/api/auth/verify-email' },
  { method: 'POST', path: '/api/auth/resend-verification' },
  { method: 'POST', path: '/api/auth/password-reset/request' },
  { method: 'POST', path: '/api/auth/password-reset/confirm' },
  { method: 'POST', path: '/api/auth/logout' },
  { method: 'GET', path: '/api/auth/session' },
];

const oddStrings = fc.oneof(
  fc.string(),
  fc.string({ unit: 'grapheme', maxLength: 300 }),
  fc.string({ unit: 'binary', maxLength: 300 }),
  fc.constantFrom(
    '',
    ' ',
    '\u0000',
    '\u202e',
    '\ud800',
    '😀'.repeat(200),
    'a'.repeat(20_000),
    '<script>alert(1)</script>',
    "' or 1=1 --",
    '${jndi:ldap://x}',
    '__proto__',
    'constructor',
    'user@example.com',
    STRONG_PASSWORD,
  ),
);

const jsonValues = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    oddStrings,
    fc.integer(),
    fc.double(),
    fc.boolean(),
    fc.constant(null),
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(fc.oneof(oddStrings, fc.constantFrom('email', 'password', 'token', '__proto__', 'constructor', 'prototype')), tie('value'), { maxKeys: 4 }),
  ),
})).value;

const plausibleBodies = fc.record(
  { email: fc.oneof(oddStrings, jsonValues), password: fc.oneof(oddStrings, jsonValues), token: fc.oneof(oddStrings, jsonValues) },
  { requiredKeys: [] },
);

const rawBodies = fc.oneof(
  jsonValues.map((value) => JSON.stringify(value) ?? 'null'),
  plausibleBodies.map((value) => JSON.stringify(value)),
  fc.constantFrom(
    '{"email":"a@example.com","email":"b@example.com","password":"Correct-Horse-9","password":1}',
    '{"__proto__":{"admin":true},"email":"p@example.com","password":"Correct-Horse-9"}',
    '{"constructor":{"prototype":{"polluted":true}}}',
    `${'['.repeat(50_000)}${']'.repeat(50_000)}`,
    `{"a":${'{"a":'.repeat(5000)}1${'}'.repeat(5000)}}`,
    '{"email": "x@example.com", "password": "Correct-Horse-9"',
    '\ufeff{"email":"bom@example.com","password":"Correct-Horse-9"}',
    'null',
    '',
  ),
  fc.string({ unit: 'binary', maxLength: 500 }),
);

const contentTypes = fc.oneof(
  fc.constant('application/json'),
  fc.constantFrom(
    'application/json; charset=utf-8',
    'text/plain',
    'application/x-www-form-urlencoded',
    'multipart/form-data; boundary=x',
    'application/json;;;',
    '',
    'APPLICATION/JSON',
  ),
  fc.string({ maxLength: 40 }).filter((s) => /^[\x20-\x7e]*$/.test(s)),
);

const cookies = fc.oneof(
  fc.constant(undefined),
  fc.string({ maxLength: 200 }).filter((s) => /^[\x20-\x7e]*$/.test(s)),
  fc.constantFrom(
    'gatehouse_session=',
    'gatehouse_session=eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.',
    'gatehouse_session=a.b.c; gatehouse_session=d.e.f',
    `gatehouse_session=${'x'.repeat(8000)}`,
    'gatehouse_session="quoted"',
    'gatehouse_session=%E0%A4%A',
  ),
);

async function expectErrorShape(response: Response): Promise<Record<string, unknown> | null> {
  expect(response.status).toBeLessThan(500);
  if (response.status < 400) return null;
  expect(response.headers.get('content-type')).toMatch(/^application\/json/);
  const body = (await response.json()) as Record<string, unknown>;
  expect(typeof body.error).toBe('string');
  expect(typeof body.message).toBe('string');
  expect(JSON.stringify(body)).not.toMatch(/\bat .*\.(ts|js):\d+/);
  return body;
}

describeEachDialect('hostile input', (dialect) => {
  let t: TestGatehouse;
  const runs = dialect === 'sqlite' ? 150 : 40;

  beforeAll(async () => {
    t = await createTestGatehouse(dialect, {
      env: {
        NODE_ENV: 'development',
        RATE_LIMIT_REGISTER: '999999999/1s',
        RATE_LIMIT_LOGIN: '999999999/1s',
        RATE_LIMIT_PASSWORD_RESET_REQUEST: '999999999/1s',
        RATE_LIMIT_PASSWORD_RESET_CONFIRM: '999999999/1s',
        RATE_LIMIT_VERIFY_EMAIL: '999999999/1s',
        RATE_LIMIT_RESEND_VERIFICATION: '999999999/1s',
        LOCKOUT_MAX_FAILURES: '1000',
      },
    });
  });
  afterAll(async () => {
    await t.close();
  });

  async function counts(): Promise<{ users: number; events: number }> {
    const events = await t.gatehouse.stores.audit.listRecentEvents(100_000);
    const users = new Set(events.filter((e) => e.type === 'user_created').map((e) => e.userId)).size;
    return { users, events: events.length };
  }

  test('random bodies, content types and cookies on every endpoint: never a 5xx, always the error shape, nothing written when refused', async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...ENDPOINTS), rawBodies, contentTypes, cookies, async (endpoint, body, contentType, cookie) => {
        const before = await counts();
        const headers: Record<string, string> = {};
        if (contentType !== '') headers['content-type'] = contentType;
        const response = await t.request(endpoint.method, endpoint.path, {
          ...(endpoint.method === 'GET' ? {} : { body }),
          headers,
          ...(cookie ? { cookie } : {}),
        });
        const error = await expectErrorShape(response);
        if (error && ['validation_error', 'unsupported_media_type', 'payload_too_large', 'not_authenticated'].includes(error.error as string)) {
          expect(await counts()).toEqual(before);
        }
      }),
      { numRuns: runs },
    );
    expect(({} as Record<string, unknown>).admin).toBeUndefined();
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  test('structured but wrong bodies (types swapped, odd strings) on every endpoint', async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...ENDPOINTS), plausibleBodies, async (endpoint, body) => {
        const response = await t.request(endpoint.method, endpoint.path, endpoint.method === 'GET' ? {} : { json: body });
        await expectErrorShape(response);
      }),
      { numRuns: runs },
    );
  });

  test('odd headers: huge user agents, forged forwarding headers, odd methods', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...ENDPOINTS),
        fc.string({ maxLength: 4000 }).filter((s) => /^[\x20-\x7e]*$/.test(s)),
        fc.constantFrom('PUT', 'DELETE', 'PATCH', 'OPTIONS', 'POST', 'GET'),
        async (endpoint, header, method) => {
          const response = await t.request(method, endpoint.path, {
            headers: { 'user-agent': header, 'x-forwarded-for': header, 'content-type': 'application/json' },
            body: method === 'GET' ? undefined : JSON.stringify({ email: 'odd@example.com', password: STRONG_PASSWORD }),
          });
          await expectErrorShape(response);
        },
      ),
      { numRuns: Math.floor(runs / 2) },
    );
  });
});

describeEachDialect('hostile input on the provider flow', (dialect) => {
  let t: TestGatehouse;
  let github: FakeGitHub;
  beforeAll(async () => {
    github = await startFakeGitHub();
    t = await createTestGatehouse(dialect, {
      env: {
        GITHUB_CLIENT_ID: github.clientId,
        GITHUB_CLIENT_SECRET: github.clientSecret,
        GITHUB_AUTH_URL: github.authUrl,
        GITHUB_API_URL: github.apiUrl,
        AUTH_SECRET: 'hostile-input-auth-secret',
        ENCRYPTION_KEY_BASE64: Buffer.alloc(32, 7).toString('base64'),
      },
    });
  });
  afterAll(async () => {
    await t.close();
    await github.close();
  });

  const queryValues = fc.oneof(
    oddStrings,
    fc.constantFrom('', 'x', '%', '%00', '%E0%A4%A', '//evil.example', 'https://evil.example', '/.//evil.example', '\\\\evil'),
  );
  const queries = fc.dictionary(fc.constantFrom('code', 'state', 'error', 'error_description', 'return_to', 'error_uri', '__proto__', 'code[]'), queryValues, {
    maxKeys: 5,
  });

  /** Every answer is a redirect onto this origin, or the JSON error shape; never a 5xx. */
  async function expectSafeAnswer(response: Response): Promise<void> {
    expect(response.status).toBeLessThan(500);
    if (response.status === 302) {
      const location = response.headers.get('location')!;
      expect(new URL(location, 'http://localhost:3000/').origin === 'http://localhost:3000' || location.startsWith(github.authUrl), location).toBe(true);
      return;
    }
    await expectErrorShape(response);
  }

  test('random callback queries and cookies: a redirect to this origin or an error, never a 5xx or a session', async () => {
    await fc.assert(
      fc.asyncProperty(queries, cookies, async (query, cookie) => {
        const search = new URLSearchParams(query).toString();
        const response = await t.request(
          'GET',
          `/api/auth/callback/github?${search}`,
          cookie ? { cookie: cookie.replace('gatehouse_session', 'gatehouse_oauth') } : {},
        );
        await expectSafeAnswer(response);
        expect(response.headers.getSetCookie().some((header) => header.startsWith('gatehouse_session='))).toBe(false);
      }),
      { numRuns: dialect === 'sqlite' ? 150 : 40 },
    );
  });

  test('random return_to values on the start endpoint: the provider, never another host', async () => {
    await fc.assert(
      fc.asyncProperty(queryValues, async (returnTo) => {
        const response = await t.request('GET', `/api/auth/oauth/github?${new URLSearchParams({ return_to: returnTo }).toString()}`);
        await expectSafeAnswer(response);
      }),
      { numRuns: dialect === 'sqlite' ? 100 : 30 },
    );
  });
});
