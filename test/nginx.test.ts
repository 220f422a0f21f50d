/**
 * Gatehouse behind a real nginx (Debian's), configured by the blocks of docs/production.md and
 * docs/integrating.md as they are written: TLS at nginx with a
 * certificate made by openssl, TRUST_PROXY=1 and an https BASE_URL. Clients connect from their
 * own loopback addresses (127.0.0.2, 127.0.0.3), so the address nginx puts in X-Forwarded-For is
 * the client's real one, not something the test writes in a header.
 *
 * Checked: the client's address reaches the audit trail and the locks (one person's wrong
 * passwords do not lock another out), the cookies are Secure `__Host-`, HSTS is sent, Origin
 * passes through (a cross-site POST is refused), and forward-auth (`auth_request` on
 * GET /api/auth/forward) protects a backend in another process: signed in, it sees who; not
 * signed in, the browser is sent to the sign-in page, which returns there.
 *
 * Skipped with a message when nginx is not installed, unless REQUIRE_NGINX=1 (CI installs it).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import { chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { freePort } from './support/free-port.js';
import { nginxConfig, nginxInstalled, selfSignedCertificate, startNginx, type RunningNginx } from './support/nginx.js';
import { startServerProcess, type ServerProcess } from './support/server-process.js';

const installed = nginxInstalled();
const CHROMIUM = '/usr/bin/chromium';
if (!installed) {
  const message = 'nginx suite skipped: /usr/sbin/nginx (or openssl) is not installed (apt-get install nginx-light).';
  if (process.env.REQUIRE_NGINX === '1') throw new Error(`${message} REQUIRE_NGINX=1 forbids skipping.`);
  console.warn(message);
}

const PASSWORD = 'Correct-Horse-9';
const WRONG = 'Wrong-Password-1';
const ADMIN_KEY = 'admin-key-for-nginx-tests-0123456789-abcdef';
const CLIENT_A = '127.0.0.2';
const CLIENT_B = '127.0.0.3';
/** The other tests' client, so that their failures count against neither A nor B. */
const CLIENT_C = '127.0.0.4';

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** A backend of another process that knows nothing of Gatehouse: it answers with the headers it was given. */
async function startBackend(): Promise<{ port: number; child: ChildProcess }> {
  const source = `
    const server = require('node:http').createServer((request, response) => {
      response.setHeader('content-type', 'application/json');
      response.end(JSON.stringify({ path: request.url, headers: request.headers }));
    });
    server.listen(0, '127.0.0.1', () => console.log('port ' + server.address().port));
    process.on('SIGTERM', () => server.close(() => process.exit(0)));`;
  const child = spawn(process.execPath, ['-e', source], { stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise<number>((resolve, reject) => {
    child.stdout.on('data', (chunk: Buffer) => {
      const match = /port (\d+)/.exec(chunk.toString());
      if (match) resolve(Number(match[1]));
    });
    child.once('exit', () => reject(new Error('the backend exited before listening')));
  });
  return { port, child };
}

/** The `index`-th ```nginx block of a guide. */
function guideBlock(file: string, index: number): string {
  const blocks = [...fs.readFileSync(file, 'utf8').matchAll(/```nginx\n([\s\S]*?)```/g)].map((match) => match[1]!);
  const block = blocks[index];
  if (block === undefined) throw new Error(`${file} has no nginx block ${index}`);
  return block;
}

/** `text` with `from` replaced, which must be there: a guide that changed shape fails here, not silently. */
function swap(text: string, from: string | RegExp, to: string): string {
  const swapped = text.replace(from, to);
  if (swapped === text) throw new Error(`the guide no longer has ${String(from)}`);
  return swapped;
}

/**
 * The configuration the guides show, taken from them as written: docs/production.md's proxy
 * (its first server block; the port-80 redirect is left out) with docs/integrating.md's
 * forward-auth blocks inside it. Only the addresses, ports and certificate paths of this run change.
 */
function siteConfig(options: { port: number; gatehousePort: number; backendPort: number; cert: string; key: string }): string {
  let proxy = guideBlock('docs/production.md', 0);
  proxy = swap(proxy, 'server 127.0.0.1:3000;', `server 127.0.0.1:${options.gatehousePort};`);
  proxy = swap(proxy, 'listen 443 ssl;', `listen 127.0.0.1:${options.port} ssl;`);
  proxy = swap(proxy, /ssl_certificate\s+\S+;/, `ssl_certificate ${options.cert};`);
  proxy = swap(proxy, /ssl_certificate_key\s+\S+;/, `ssl_certificate_key ${options.key};`);
  proxy = swap(proxy, /\n\s*server \{\s*listen 80;[\s\S]*$/, '\n');
  const forward = swap(guideBlock('docs/integrating.md', 0), 'proxy_pass http://127.0.0.1:8080;', `proxy_pass http://127.0.0.1:${options.backendPort};`);
  // The forward-auth locations go inside the server block, before its closing brace.
  return swap(proxy, /\}\s*$/, `${forward}}\n`);
}

describe.skipIf(!installed)('Gatehouse behind a real nginx', () => {
  let dir: string;
  let port: number;
  let origin: string;
  let ca: Buffer;
  let gatehouse: ServerProcess;
  let backend: { port: number; child: ChildProcess };
  let nginx: RunningNginx;

  /** An https request to nginx from the loopback address `from`, trusting only the test's certificate. */
  const send = (from: string, method: string, pathname: string, options: { json?: unknown; headers?: Record<string, string> } = {}): Promise<Answer> =>
    new Promise((resolve, reject) => {
      const body = options.json === undefined ? undefined : JSON.stringify(options.json);
      const request = https.request(
        {
          host: '127.0.0.1',
          servername: 'localhost',
          port,
          method,
          path: pathname,
          localAddress: from,
          ca,
          headers: {
            host: `localhost:${port}`,
            ...(body === undefined ? {} : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), origin }),
            ...options.headers,
          },
        },
        (response) => {
          let text = '';
          response.setEncoding('utf8');
          response.on('data', (chunk: string) => (text += chunk));
          response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body: text }));
        },
      );
      request.on('error', reject);
      request.end(body);
    });
  const login = (from: string, email: string, password: string) => send(from, 'POST', '/api/auth/login', { json: { email, password } });
  const sessionCookie = (answer: Answer): string => {
    const cookie = ([] as string[]).concat(answer.headers['set-cookie'] ?? []).find((line) => line.startsWith('__Host-gatehouse_session='));
    if (cookie === undefined) throw new Error(`no session cookie in ${JSON.stringify(answer.headers)}`);
    return cookie.split(';')[0]!;
  };
  const admin = async (method: string, pathname: string) =>
    JSON.parse((await send('127.0.0.1', method, `/api/admin${pathname}`, { headers: { authorization: `Bearer ${ADMIN_KEY}` } })).body);

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-nginx-'));
    const { cert, key } = selfSignedCertificate(dir);
    ca = fs.readFileSync(cert);
    port = await freePort();
    origin = `https://localhost:${port}`;
    gatehouse = await startServerProcess({
      cwd: dir,
      env: {
        NODE_ENV: 'production',
        BASE_URL: origin,
        TRUST_PROXY: '1',
        DATABASE_URL: `sqlite:${path.join(dir, 'gatehouse.sqlite')}`,
        JWT_SECRET: 'nginx-test-secret-0123456789-0123456789-abc',
        METRICS_TOKEN: 'nginx-test-metrics-token-0123456789',
        ADMIN_API_KEY: ADMIN_KEY,
        BCRYPT_ROUNDS: '10',
        RATE_LIMIT_REGISTER: '100/15m',
        RATE_LIMIT_LOGIN: '100/15m',
      },
    });
    backend = await startBackend();
    nginx = await startNginx(
      dir,
      nginxConfig(dir, siteConfig({ port, gatehousePort: Number(new URL(gatehouse.url).port), backendPort: backend.port, cert, key })),
      port,
    );
    for (const email of ['alice@example.com', 'bob@example.com']) {
      const registered = await send(CLIENT_B, 'POST', '/api/auth/register', { json: { email, password: PASSWORD } });
      expect(registered.status, registered.body).toBe(201);
    }
  });

  afterAll(async () => {
    await nginx?.stop();
    backend?.child.kill('SIGTERM');
    await gatehouse?.stop();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  test('answers over TLS with HSTS, and cookies that are Secure and __Host-', async () => {
    const answer = await login(CLIENT_C, 'alice@example.com', PASSWORD);
    expect(answer.status).toBe(200);
    expect(answer.headers['strict-transport-security']).toMatch(/max-age=\d+/);
    const cookies = ([] as string[]).concat(answer.headers['set-cookie'] ?? []);
    expect(cookies.length).toBeGreaterThan(0);
    for (const cookie of cookies) {
      expect(cookie).toMatch(/^__Host-/);
      expect(cookie).toMatch(/; Secure/i);
      expect(cookie).toMatch(/; Path=\//);
      expect(cookie).not.toMatch(/Domain=/i);
    }
  });

  test("the audit trail has the client's own address, not nginx's, and a forged X-Forwarded-For changes nothing", async () => {
    await send(CLIENT_C, 'POST', '/api/auth/login', { json: { email: 'nobody@example.com', password: WRONG }, headers: { 'x-forwarded-for': '203.0.113.99' } });
    const { events } = await admin('GET', '/audit?type=login_failure&limit=1');
    expect(events[0]).toMatchObject({ ip: CLIENT_C, metadata: { email: 'nobody@example.com', reason: 'unknown_email' } });
  });

  test('Origin passes through: a POST from another site is refused, one from the site itself is not', async () => {
    const foreign = await send(CLIENT_C, 'POST', '/api/auth/login', {
      json: { email: 'alice@example.com', password: PASSWORD },
      headers: { origin: 'https://evil.example' },
    });
    expect(foreign.status).toBe(403);
    expect((await login(CLIENT_C, 'alice@example.com', PASSWORD)).status).toBe(200);
  });

  test("one person's wrong passwords lock that account and that address, not another person elsewhere", async () => {
    const attempts: number[] = [];
    for (let i = 0; i < 6; i++) attempts.push((await login(CLIENT_A, 'alice@example.com', WRONG)).status);
    expect(attempts).toEqual([401, 401, 401, 401, 401, 429]);
    // Bob, from his own address, signs in.
    const bob = await login(CLIENT_B, 'bob@example.com', PASSWORD);
    expect(bob.status).toBe(200);
    // The address that guessed is locked, and said so; the operator sees it and lifts it.
    const fromA = await login(CLIENT_A, 'bob@example.com', PASSWORD);
    expect(fromA.status).toBe(429);
    expect(JSON.parse(fromA.body).message).toMatch(/network address/);
    expect((await admin('GET', '/ip-locks')).locks).toEqual([{ ip: CLIENT_A, secondsLeft: expect.any(Number) }]);
    expect(await admin('POST', `/ip-locks/${CLIENT_A}/unlock`)).toEqual({ wasLocked: true });
    expect((await login(CLIENT_A, 'bob@example.com', PASSWORD)).status).toBe(200);
    // Alice's account stays locked until she waits, resets her password, or an operator unlocks it.
    const alice = await login(CLIENT_B, 'alice@example.com', PASSWORD);
    expect(alice.status).toBe(429);
    expect(JSON.parse(alice.body).message).toMatch(/this email address/);
  });

  test('forward-auth: not signed in, the backend is never reached and the browser goes to the sign-in page with return_to', async () => {
    const answer = await send(CLIENT_B, 'GET', '/app/reports', { headers: { 'x-auth-user-id': 'forged', cookie: '__Host-gatehouse_session=forged' } });
    expect(answer.status).toBe(302);
    expect(answer.headers.location).toMatch(/\/login\?return_to=\/app\/reports$/);
    // The sign-in page keeps that path, to return to it once signed in.
    const page = await send(CLIENT_B, 'GET', '/login?return_to=/app/reports');
    expect(page.status).toBe(200);
    expect(page.body).toContain('data-return-to="/app/reports"');
    // Another origin is never a place to return to.
    const elsewhere = await send(CLIENT_B, 'GET', `/login?return_to=${encodeURIComponent('https://evil.example/app')}`);
    expect(elsewhere.body).not.toContain('evil.example');
  });

  test('forward-auth: signed in, the backend sees who, and a header the client forged is replaced', async () => {
    const signedIn = await login(CLIENT_B, 'bob@example.com', PASSWORD);
    const cookie = sessionCookie(signedIn);
    const me = JSON.parse((await send(CLIENT_B, 'GET', '/api/auth/session', { headers: { cookie } })).body);
    const answer = await send(CLIENT_B, 'GET', '/app/reports?month=11', {
      headers: { cookie, 'x-auth-user-id': 'forged', 'x-auth-email': 'boss@example.com' },
    });
    expect(answer.status).toBe(200);
    const seen = JSON.parse(answer.body) as { path: string; headers: Record<string, string> };
    expect(seen.path).toBe('/app/reports?month=11');
    expect(seen.headers).toMatchObject({ 'x-auth-user-id': me.user.id, 'x-auth-email': 'bob@example.com', 'x-auth-methods': 'password' });
    // Signed out: the same cookie no longer opens the backend.
    expect((await send(CLIENT_B, 'POST', '/api/auth/logout', { json: {}, headers: { cookie } })).status).toBe(200);
    expect((await send(CLIENT_B, 'GET', '/app/reports', { headers: { cookie } })).status).toBe(302);
  });

  // The round trip in a real browser, when Debian's Chromium is there (the browser suites require it in CI).
  test.skipIf(!fs.existsSync(CHROMIUM))('in a browser: the protected path → the sign-in page → signed in, back on that path, which sees who', async () => {
    const browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-background-networking',
        '--disable-quic',
        '--no-first-run',
        '--host-resolver-rules=MAP localhost 127.0.0.1',
      ],
    });
    try {
      // The test's own certificate, which the browser does not know: trusted for this context only.
      const context = await browser.newContext({ ignoreHTTPSErrors: true });
      const page = await context.newPage();
      await page.goto(`${origin}/app/inbox`);
      expect(new URL(page.url()).pathname).toBe('/login');
      expect(new URL(page.url()).searchParams.get('return_to')).toBe('/app/inbox');
      await page.fill('#email', 'bob@example.com');
      await page.fill('#password', PASSWORD);
      await page.click('button[type="submit"]');
      await page.waitForURL(`${origin}/app/inbox`);
      const seen = JSON.parse((await page.textContent('body')) ?? '{}') as { headers: Record<string, string> };
      expect(seen.headers).toMatchObject({ 'x-auth-email': 'bob@example.com', 'x-auth-methods': 'password' });
    } finally {
      await browser.close();
    }
  });

  test('nginx logged no error on the way', () => {
    expect(nginx.errors()).not.toMatch(/\[(error|crit|alert|emerg)\]/);
  });
});
