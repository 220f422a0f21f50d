import { createHash } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import { ConfigError, loadConfig } from '../src/config.js';
import { createLogger } from '../src/logger.js';
import { BREACHED_PASSWORD_MESSAGE } from '../src/credentials/breach-check.js';
import { STRONG_PASSWORD, TEST_JWT_SECRET, createTestGatehouse, describeEachDialect, type TestGatehouse } from './support/harness.js';

// Not on the shipped common-password list (so only the breach check can refuse it).
const BREACHED = 'Violet-Quasar-Tango-41';
const sha1 = (text: string) => createHash('sha1').update(text, 'utf8').digest('hex').toUpperCase();

type Mode = 'answer' | 'hang' | 'error500' | 'huge';

/** A local stand-in for api.pwnedpasswords.com/range/: real HTTP, the API's line format and padding. */
async function startRangeServer(): Promise<{ url: string; requests: { path: string; headers: IncomingHttpHeaders }[]; mode: Mode; close(): Promise<void> }> {
  const state = { mode: 'answer' as Mode };
  const requests: { path: string; headers: IncomingHttpHeaders }[] = [];
  const breached = sha1(BREACHED);
  const server: Server = createServer((request, response) => {
    const path = request.url ?? '';
    requests.push({ path, headers: request.headers });
    if (state.mode === 'hang') return; // accepts and never answers
    if (state.mode === 'error500') return void response.writeHead(500).end('busy');
    const prefix = path.split('/').pop() ?? '';
    if (state.mode === 'huge') {
      response.writeHead(200, { 'Content-Type': 'text/plain' });
      return void response.end('0'.repeat(2 * 1024 * 1024));
    }
    const lines = ['0018A45C4D1DEF81644B54AB7F969B88D65:3', '00D4F6E8FA6EECAD2A3AA415EEC418D38EC:0'];
    if (breached.startsWith(prefix)) lines.push(`${breached.slice(5)}:51`);
    response.writeHead(200, { 'Content-Type': 'text/plain' }).end(lines.join('\r\n'));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/range/`,
    requests,
    get mode() {
      return state.mode;
    },
    set mode(mode: Mode) {
      state.mode = mode;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

let range: Awaited<ReturnType<typeof startRangeServer>>;
beforeAll(async () => {
  range = await startRangeServer();
});
afterAll(async () => {
  await range.close();
});

describeEachDialect('PASSWORD_BREACH_CHECK=hibp', (dialect) => {
  let t: TestGatehouse;
  let logLines: string[];
  beforeEach(async () => {
    range.mode = 'answer';
    range.requests.length = 0;
    logLines = [];
    t = await createTestGatehouse(dialect, {
      env: { NODE_ENV: 'development', PASSWORD_BREACH_CHECK: 'hibp', PASSWORD_BREACH_CHECK_URL: range.url, RATE_LIMIT_REGISTER: '100/15m' },
      overrides: {
        breachCheckHTTP: { timeoutMs: 300 },
        logger: createLogger({ level: 'warn', destination: { write: (line: string) => void logLines.push(line) } }),
      },
    });
  });
  afterEach(async () => {
    await t.close();
  });

  const register = (email: string, password: string) => t.request('POST', '/api/auth/register', { json: { email, password } });

  test('register refuses a breached password as an issue on `password`; only 5 hex characters of its SHA-1 left the server, with padding asked for', async () => {
    const response = await register('bea@example.com', BREACHED);
    expect(response.status).toBe(400);
    const body = await response.json();
    expect(body.error).toBe('validation_error');
    expect(body.issues).toEqual([{ path: 'password', message: BREACHED_PASSWORD_MESSAGE }]);
    expect(await t.gatehouse.stores.users.findUserByEmail('bea@example.com')).toBeNull();

    expect(range.requests).toHaveLength(1);
    const [request] = range.requests;
    expect(request!.path).toBe(`/range/${sha1(BREACHED).slice(0, 5)}`);
    expect(request!.headers['add-padding']).toBe('true');
    // Neither the password nor the rest of its hash was sent anywhere in the request.
    const sent = JSON.stringify(request);
    expect(sent).not.toContain(BREACHED);
    expect(sent).not.toContain(sha1(BREACHED).slice(5));
  });

  test('a password the range does not list registers (201)', async () => {
    expect((await register('cleo@example.com', STRONG_PASSWORD)).status).toBe(201);
    expect(range.requests).toHaveLength(1);
  });

  test('reset confirm refuses a breached password without spending the token; another password then works', async () => {
    await register('rita@example.com', STRONG_PASSWORD);
    const { token } = await (await t.request('POST', '/api/auth/password-reset/request', { json: { email: 'rita@example.com' } })).json();
    const refused = await t.request('POST', '/api/auth/password-reset/confirm', { json: { token, password: BREACHED } });
    expect(refused.status).toBe(400);
    expect((await refused.json()).issues).toEqual([{ path: 'password', message: BREACHED_PASSWORD_MESSAGE }]);
    const accepted = await t.request('POST', '/api/auth/password-reset/confirm', { json: { token, password: 'Another-Fine-Pass-8' } });
    expect(accepted.status).toBe(200);
  });

  test.each([
    ['hang', 'no answer within the time bound'],
    ['error500', 'status 500'],
    ['huge', 'answer too large'],
  ] as const)('fails open when the service %s: the password is accepted within the time bound, with a warning', async (mode, reason) => {
    range.mode = mode;
    const started = Date.now();
    const response = await register('dora@example.com', BREACHED);
    expect(response.status).toBe(201);
    expect(Date.now() - started).toBeLessThan(3000);
    const warnings = logLines.map((line) => JSON.parse(line) as { msg: string; reason: string });
    expect(warnings).toEqual([expect.objectContaining({ msg: expect.stringContaining('breached-password check unavailable'), reason })]);
    expect(logLines.join('')).not.toContain(BREACHED);
  });
});

describe('PASSWORD_BREACH_CHECK configuration', () => {
  const base = { JWT_SECRET: TEST_JWT_SECRET };
  test('off by default; hibp asks the public range API', () => {
    expect(loadConfig(base).passwordBreachCheck).toEqual({ kind: 'off' });
    expect(loadConfig({ ...base, PASSWORD_BREACH_CHECK: 'hibp' }).passwordBreachCheck).toEqual({
      kind: 'hibp',
      rangeUrl: 'https://api.pwnedpasswords.com/range/',
    });
  });

  test('a wrong value, or a plain-http range URL in production, stops the start naming the variable', () => {
    expect(() => loadConfig({ ...base, PASSWORD_BREACH_CHECK: 'yes' })).toThrow(/PASSWORD_BREACH_CHECK: expected off or hibp/);
    expect(() => loadConfig({ ...base, PASSWORD_BREACH_CHECK_URL: 'https://example.com/range' })).toThrow(ConfigError);
    expect(() =>
      loadConfig({ ...base, NODE_ENV: 'production', BASE_URL: 'https://auth.example.com', PASSWORD_BREACH_CHECK_URL: 'http://example.com/range/' }),
    ).toThrow(/PASSWORD_BREACH_CHECK_URL/);
  });

  test('without the check no request leaves the server', async () => {
    range.requests.length = 0;
    const t = await createTestGatehouse('sqlite');
    try {
      expect((await t.request('POST', '/api/auth/register', { json: { email: 'off@example.com', password: BREACHED } })).status).toBe(201);
      expect(range.requests).toHaveLength(0);
    } finally {
      await t.close();
    }
  });
});
