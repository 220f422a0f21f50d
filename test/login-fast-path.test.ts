/**
 * The login's refusals on a fast path (password-sign-in/fast-path.ts): `gatehouse serve` answers
 * the 400 and 413 of a body that is not a login, and the 429 of a login from an address it already
 * refuses, on Node's objects, before the app. Over real HTTP on each database, every answer is
 * compared with the library face's (`gatehouse.fetch`, which never takes the fast path) for the
 * same request: the same status, headers (but the request id and Node's connection headers) and
 * body bytes. The refusals are audited and counted in the metrics as the app's are; every other
 * sign-in goes on to the app with the body already read, and signs in. With TRUSTED_ORIGINS set, as here, every API answer carries `Vary:
 * Origin`, the session check's fast answers too.
 */
import http from 'node:http';
import net from 'node:net';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { MockClock } from '../src/clock.js';
import { loadConfig } from '../src/config.js';
import { createLogger } from '../src/logger.js';
import { startServer, type RunningServer } from '../src/server.js';
import { STRONG_PASSWORD, TEST_JWT_SECRET, describeEachDialect, openTestDatabase } from './support/harness.js';
import type { DatabaseHandle } from '../src/db/connect.js';
import { comparable, overHttp, viaLibrary, type Raw, type Sent } from './support/fast-path.js';

const JSON_TYPE = { 'content-type': 'application/json' };
/** A request of this file: a POST to the login unless it says otherwise. */
type LoginSent = Partial<Sent>;
const toLogin = (sent: LoginSent): Sent => ({ path: '/api/auth/login', method: 'POST', ...sent });
const wrongLogin = (email: string): LoginSent => ({ headers: JSON_TYPE, body: JSON.stringify({ email, password: 'Not-The-Password-1' }) });

describeEachDialect('the login refused on the fast path answers as the app does', (dialect) => {
  let server: RunningServer;
  let database: DatabaseHandle;
  let drop: () => Promise<void>;
  const clock = new MockClock(Date.UTC(2026, 10, 27, 12, 1, 0));
  const metricsLines: () => Promise<string[]> = async () => (await (await fetch(`${server.url}/metrics`)).text()).split('\n');
  const metric = async (prefix: string, ...labels: string[]): Promise<number> => {
    const line = (await metricsLines()).find((l) => l.startsWith(prefix) && labels.every((label) => l.includes(label)));
    return line === undefined ? 0 : Number(line.split(' ').pop());
  };

  // Requests the server gave the app (`gatehouse.fetch`): a fast answer adds none, a hand-over one.
  let appRequests = 0;
  let libraryFetch: RunningServer['gatehouse']['fetch'];

  beforeAll(async () => {
    const opened = await openTestDatabase(dialect);
    database = opened.database;
    drop = opened.drop;
    const config = loadConfig({
      JWT_SECRET: TEST_JWT_SECRET,
      BCRYPT_ROUNDS: '4',
      PORT: '0',
      HOST: '127.0.0.1',
      LOG_LEVEL: 'silent',
      RATE_LIMIT_LOGIN: '2/15m',
      TRUSTED_ORIGINS: 'https://app.example.com',
    });
    server = await startServer(config, { clock, database, logger: createLogger({ level: 'silent' }), mailer: { send: async () => {} } });
    libraryFetch = server.gatehouse.fetch.bind(server.gatehouse);
    server.gatehouse.fetch = (request, info) => {
      appRequests += 1;
      return libraryFetch(request, info);
    };
  });
  afterAll(async () => {
    await server?.stop();
    await drop?.();
  });

  const send = (sent: LoginSent): Promise<Raw> => overHttp(server.url, toLogin(sent));

  /** The fast path's answer over HTTP (the app not asked) beside the library face's. */
  async function same(sent: LoginSent, status: number): Promise<Raw> {
    const before = appRequests;
    const fast = await send(sent);
    expect(appRequests).toBe(before);
    const library = await viaLibrary(libraryFetch, server.url, toLogin(sent));
    expect(fast.status).toBe(status);
    expect(comparable(fast)).toEqual(comparable(library));
    expect(fast.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    return fast;
  }

  function takes(headers: Record<string, string>, method = 'POST', url = '/api/auth/login'): boolean {
    const all: Record<string, string> = { host: '127.0.0.1', ...headers };
    const headersDistinct = Object.fromEntries(Object.entries(all).map(([name, value]) => [name, [value]]));
    const incoming = { method, url, headers: all, headersDistinct, socket: { remoteAddress: '127.0.0.1' } };
    return server.gatehouse.fastRoute(incoming as unknown as http.IncomingMessage) !== null;
  }

  test('once the address is refused, the 429 is the same, byte for byte, counted and audited', async () => {
    const email = `flood-${dialect}@example.com`;
    expect(takes(JSON_TYPE)).toBe(true);
    // RATE_LIMIT_LOGIN=2/15m: two wrong passwords through the app, the third refused by the limit.
    for (let i = 0; i < 2; i++) expect((await send(wrongLogin(email))).status).toBe(401);
    const first = await send(wrongLogin(email));
    expect(first.status).toBe(429);

    const [requests, refusals, logins] = [
      await metric('gatehouse_http_requests_total{', 'route="/api/auth/login"', 'status="429"'),
      await metric('gatehouse_rate_limit_refusals_total{', 'limit="login"'),
      await metric('gatehouse_logins_total{', 'result="rate_limited"'),
    ];
    const refused = await same(wrongLogin(email), 429);
    expect(JSON.parse(refused.body)).toEqual({ error: 'rate_limited', message: 'Too many requests. Try again later.' });
    expect(refused.headers['retry-after']).toBe(String(14 * 60));
    expect(refused.headers.vary).toBe('Origin');
    // Counted once by the fast path and once by the app (the library face's request).
    expect(await metric('gatehouse_http_requests_total{', 'route="/api/auth/login"', 'status="429"')).toBe(requests + 2);
    expect(await metric('gatehouse_rate_limit_refusals_total{', 'limit="login"')).toBe(refusals + 2);
    expect(await metric('gatehouse_logins_total{', 'result="rate_limited"')).toBe(logins + 2);
  });

  test('a body that is not a login gets the app 400 or 413, byte for byte, and counts nothing', async () => {
    const refusals = await metric('gatehouse_rate_limit_refusals_total{', 'limit="login"');
    const malformed: LoginSent[] = [
      { headers: JSON_TYPE, body: '{"email": "x@example.com", "password": ' },
      { headers: JSON_TYPE, body: JSON.stringify({ email: 'not an address', password: 'x' }) },
      { headers: JSON_TYPE, body: '{"email": "a@example.com", "email": "b@example.com", "password": "x"}' },
      { headers: JSON_TYPE, body: '' },
    ];
    for (const sent of malformed) {
      const refused = await same(sent, 400);
      expect(JSON.parse(refused.body)).toMatchObject({ error: 'validation_error' });
    }
    const tooLong = { headers: JSON_TYPE, body: JSON.stringify({ email: 'x@example.com', password: 'p'.repeat(20_000) }) };
    await same(tooLong, 413);
    expect(await metric('gatehouse_rate_limit_refusals_total{', 'limit="login"')).toBe(refusals);
  });

  test('what it does not take goes to the app: another origin, a cross-site mark, a body not JSON, a forwarded address', async () => {
    expect(takes({ ...JSON_TYPE, origin: 'https://app.example.com' })).toBe(false);
    expect(takes({ ...JSON_TYPE, 'sec-fetch-site': 'cross-site' })).toBe(false);
    expect(takes({ 'content-type': 'text/plain' })).toBe(false);
    expect(takes({ ...JSON_TYPE, 'x-forwarded-for': '203.0.113.9' })).toBe(false);
    expect(takes(JSON_TYPE, 'POST', '/api/auth/register')).toBe(false);
    expect(takes({ ...JSON_TYPE, host: 'a b' })).toBe(false);
    // Two Content-Types: Node keeps the first, the app reads both (its 415).
    const twice = await new Promise<string>((resolve, reject) => {
      const body = JSON.stringify({ email: 'someone@example.com', password: 'x' });
      const { port } = new URL(server.url);
      const socket = net.connect(Number(port), '127.0.0.1', () =>
        socket.end(
          `POST /api/auth/login HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Type: text/plain\r\n` +
            `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
        ),
      );
      let text = '';
      socket.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
      socket.on('end', () => resolve(text.split('\r\n')[0] ?? ''));
      socket.on('error', reject);
    });
    expect(twice).toBe('HTTP/1.1 415 Unsupported Media Type');
    expect(takes({ ...JSON_TYPE, host: '[::1]:8080' })).toBe(true);
    const trusted = await send({ ...wrongLogin('someone@example.com'), headers: { ...JSON_TYPE, origin: 'https://app.example.com' } });
    expect(trusted.status).toBe(429);
    expect(trusted.headers['access-control-allow-origin']).toBe('https://app.example.com');
    expect((await send({ headers: { 'content-type': 'text/plain' }, body: 'x' })).status).toBe(415);
  });

  test('the session check on its fast path carries Vary: Origin like the app', async () => {
    const registered = await fetch(`${server.url}/api/auth/register`, {
      method: 'POST',
      headers: JSON_TYPE,
      body: JSON.stringify({ email: `vary-${dialect}@example.com`, password: STRONG_PASSWORD }),
    });
    expect(registered.status).toBe(201);
    const cookie = registered.headers.getSetCookie()[0]!.split(';')[0]!;
    const signedIn = await same({ path: '/api/auth/session', method: 'GET', headers: { cookie } }, 200);
    expect(signedIn.headers.vary).toBe('Origin');
    await same({ path: '/api/auth/forward', method: 'GET', headers: {} }, 401);
  });

  test('once the window ends the address signs in again through the app, with the body read before; every refusal is audited', async () => {
    clock.advance(15 * 60 * 1000);
    expect(takes(JSON_TYPE)).toBe(true);
    expect((await send(wrongLogin(`flood-${dialect}@example.com`))).status).toBe(401);
    const handedOver = appRequests;
    const signedIn = await send({
      headers: JSON_TYPE,
      body: JSON.stringify({ email: `vary-${dialect}@example.com`, password: STRONG_PASSWORD }),
    });
    expect(signedIn.status).toBe(200);
    expect(appRequests).toBe(handedOver + 1);
    expect(JSON.parse(signedIn.body)).toEqual({ ok: true });
    expect(signedIn.headers['set-cookie']).toMatch(/^gatehouse_session=/);
    await server.gatehouse.sweep();
    // The first refusal's own row, then (written once its window ended) the summary of the window's others.
    const rows = await database.kysely
      .selectFrom('audit_events')
      .select(['user_id', 'ip', 'metadata'])
      .where('event_type', '=', 'login_failure')
      .orderBy('id')
      .execute();
    const limited = rows
      .map((row) => ({ ...row, metadata: JSON.parse(row.metadata) as Record<string, unknown> }))
      .filter((row) => row.metadata.reason === 'rate_limited');
    expect(limited[0]).toMatchObject({ user_id: null, ip: '127.0.0.1', metadata: { email: `flood-${dialect}@example.com`, method: 'password' } });
    // Four refusals of 127.0.0.1 in the window: the third login, the fast path's and the library's
    // of the first test, and the trusted origin's of the third test.
    expect(limited).toHaveLength(2);
    expect(limited[1]!.metadata, JSON.stringify(limited)).toMatchObject({ refusedCount: 4, method: 'password' });
  });

  test('a sign-in whose body was still coming when the drain began is answered by the app, not refused', async () => {
    clock.advance(15 * 60 * 1000);
    const answered = new Promise<Raw>((resolve, reject) => {
      const body = JSON.stringify({ email: `late-${dialect}@example.com`, password: 'Not-The-Password-1' });
      const headers = { ...JSON_TYPE, 'content-length': String(Buffer.byteLength(body)) };
      const request = http.request(`${server.url}/api/auth/login`, { method: 'POST', headers }, (response) => {
        let text = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (text += chunk));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers as Record<string, string>, body: text }));
      });
      request.on('error', reject);
      request.write(body.slice(0, 10));
      // The headers are in: the fast path has taken the request and waits for its body.
      setTimeout(() => {
        void server.stop();
        setTimeout(() => request.end(body.slice(10)), 50);
      }, 50);
    });
    const late = await answered;
    expect(late.status).toBe(401);
    expect(late.headers.connection).toBe('close');
  });
});
