/**
 * Taking data out (docs/operations.md, "Importing and exporting users"): the admin export in the
 * import format imports into a fresh Gatehouse unchanged, and everyone signs in there; hashes
 * only on request; `gatehouse users export` writes the same lines. A person's own data
 * (`GET /api/auth/account/export`) holds what we know about them and never a hash, token or
 * secret; "Download my data" on /account.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import bcrypt from 'bcrypt';
import { afterEach, beforeEach, expect, test } from 'vitest';
import { STRONG_PASSWORD, TEST_JWT_SECRET, cookieFrom, createTestGatehouse, describeEachDialect, type TestGatehouse } from './support/harness.js';

const KEY = 'admin-key-for-tests-0123456789-abcdefghij';
const SESSION = 'gatehouse_session';
const IMPORTED_PASSWORD = 'Imported-Pass-42';
const BCRYPT_HASH = bcrypt.hashSync(IMPORTED_PASSWORD, 4);
const env = { ADMIN_API_KEY: KEY, RATE_LIMIT_ADMIN: '1000/1m', RATE_LIMIT_LOGIN: '1000/15m', RATE_LIMIT_REGISTER: '1000/15m' };

const linesOf = (text: string): Record<string, unknown>[] =>
  text
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>)
    .sort((a, b) => String(a.email).localeCompare(String(b.email)));

describeEachDialect('user export and a person’s own data', (dialect) => {
  let t: TestGatehouse;
  const others: TestGatehouse[] = [];
  beforeEach(async () => {
    t = await createTestGatehouse(dialect, { env });
  });
  afterEach(async () => {
    await t.close();
    for (const other of others.splice(0)) await other.close();
  });
  const admin = (g: TestGatehouse, method: string, url: string, body?: string) =>
    g.request(method, `/api/admin${url}`, {
      ...(body === undefined ? {} : { body }),
      headers: { authorization: `Bearer ${KEY}`, ...(body === undefined ? {} : { 'content-type': 'application/x-ndjson' }) },
    });
  const login = (g: TestGatehouse, email: string, password: string) => g.request('POST', '/api/auth/login', { json: { email, password } });

  test('round trip: the export imports into a fresh Gatehouse unchanged, and everyone signs in there', async () => {
    expect((await t.request('POST', '/api/auth/register', { json: { email: 'reg@example.com', password: STRONG_PASSWORD } })).status).toBe(201);
    const imported = [
      {
        email: 'bc@example.com',
        emailVerified: true,
        createdAt: '2019-05-06T07:08:09.000Z',
        externalId: 'ext-9',
        password: { algorithm: 'bcrypt', hash: BCRYPT_HASH },
      },
      { email: 'off@example.com', disabled: true },
      { email: 'gh@example.com', providers: [{ provider: 'github', providerUserId: '77', login: 'octo' }] },
    ];
    expect((await (await admin(t, 'POST', '/users/import', imported.map((u) => JSON.stringify(u)).join('\n'))).json()).imported).toBe(3);

    const plain = await admin(t, 'GET', '/users/export');
    expect([plain.status, plain.headers.get('content-type')]).toEqual([200, 'application/x-ndjson; charset=utf-8']);
    const plainLines = linesOf(await plain.text());
    expect(plainLines.map((l) => l.email)).toEqual(['bc@example.com', 'gh@example.com', 'off@example.com', 'reg@example.com']);
    expect(plainLines.some((l) => 'password' in l)).toBe(false);
    expect(plainLines[0]).toEqual({
      email: 'bc@example.com',
      emailVerified: true,
      createdAt: '2019-05-06T07:08:09.000Z',
      externalId: 'ext-9',
      disabled: false,
    });
    expect(plainLines[1]).toMatchObject({ providers: [{ provider: 'github', providerUserId: '77', login: 'octo' }] });
    expect(plainLines[2]).toMatchObject({ disabled: true });

    const full = await (await admin(t, 'GET', '/users/export?includePasswordHashes=true')).text();
    const fullLines = linesOf(full);
    expect((fullLines.find((l) => l.email === 'reg@example.com')?.password as { algorithm: string }).algorithm).toBe('gatehouse-v1');
    expect((fullLines.find((l) => l.email === 'bc@example.com')?.password as { algorithm: string }).algorithm).toBeTruthy();
    expect((await admin(t, 'GET', '/users/export?includePasswordHashes=yes')).status).toBe(400);

    const fresh = await createTestGatehouse(dialect, { env });
    others.push(fresh);
    const result = await (await admin(fresh, 'POST', '/users/import', full)).json();
    expect([result.imported, result.failed]).toEqual([4, []]);
    expect(linesOf(await (await admin(fresh, 'GET', '/users/export?includePasswordHashes=true')).text())).toEqual(fullLines);
    expect((await login(fresh, 'reg@example.com', STRONG_PASSWORD)).status).toBe(200);
    expect((await login(fresh, 'bc@example.com', IMPORTED_PASSWORD)).status).toBe(200);
    expect((await login(fresh, 'reg@example.com', 'Wrong-Horse-99')).status).toBe(401);
  });

  test('account export: what we hold about the person, never a hash, token or secret; signed-in only; limited; audited', async () => {
    const registered = await t.request('POST', '/api/auth/register', { json: { email: 'me@example.com', password: STRONG_PASSWORD } });
    const cookie = cookieFrom(registered, SESSION)!;
    expect((await t.request('GET', '/api/auth/account/export')).status).toBe(401);

    const response = await t.request('GET', '/api/auth/account/export', { cookie });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-disposition')).toMatch(/^attachment; filename="gatehouse-my-data\.json"$/);
    expect(response.headers.get('cache-control')).toBe('no-store');
    const text = await response.text();
    const document = JSON.parse(text);
    expect(document.account).toMatchObject({ email: 'me@example.com', hasPassword: true, emailVerified: false });
    expect(document.sessions).toHaveLength(1);
    expect(document.twoFactor).toEqual({ enabled: false, enabledAt: null, recoveryCodesLeft: 0 });
    expect(document.auditEvents.map((e: { type: string }) => e.type)).toContain('user_created');

    const row = await t.database.kysely.selectFrom('users').select('password_hash').where('email', '=', 'me@example.com').executeTakeFirstOrThrow();
    const session = await t.database.kysely.selectFrom('sessions').select('token_hash').executeTakeFirstOrThrow();
    const token = cookie.split('=').slice(1).join('=');
    for (const secret of [
      STRONG_PASSWORD,
      row.password_hash!,
      row.password_hash!.slice(-31),
      session.token_hash,
      token,
      decodeURIComponent(token),
      TEST_JWT_SECRET,
    ]) {
      expect(text).not.toContain(secret);
    }
    expect(text).not.toMatch(/"(passwordHash|password_hash|tokenHash|token_hash|secret\w*)"/i);
    const audited = (await t.gatehouse.stores.audit.listRecentEvents(20)).filter((e) => e.type === 'account_exported');
    expect(audited).toHaveLength(1);
  });

  test('account export: an imported provider link is listed without any token', async () => {
    const imported = {
      email: 'li@example.com',
      password: { algorithm: 'bcrypt', hash: BCRYPT_HASH },
      providers: [{ provider: 'github', providerUserId: '31', login: 'li' }],
    };
    await admin(t, 'POST', '/users/import', JSON.stringify(imported));
    const signedIn = await login(t, 'li@example.com', IMPORTED_PASSWORD);
    expect(signedIn.status).toBe(200);
    const text = await (await t.request('GET', '/api/auth/account/export', { cookie: cookieFrom(signedIn, SESSION)! })).text();
    const document = JSON.parse(text);
    expect(document.linkedSignIns).toEqual([{ provider: 'github', login: 'li', linkedAt: expect.any(String) }]);
    expect(document.sessions[0].methods).toEqual(['password']);
    expect(text).not.toContain(BCRYPT_HASH.slice(7));
    expect(text).not.toMatch(/access_?token|refresh_?token/i);
  });

  test('RATE_LIMIT_ACCOUNT_EXPORT: past it, 429 with Retry-After', async () => {
    const limited = await createTestGatehouse(dialect, { env: { ...env, RATE_LIMIT_ACCOUNT_EXPORT: '2/1h' } });
    others.push(limited);
    const cookie = cookieFrom(await limited.request('POST', '/api/auth/register', { json: { email: 'me@example.com', password: STRONG_PASSWORD } }), SESSION)!;
    const statuses = [];
    for (let i = 0; i < 3; i++) statuses.push((await limited.request('GET', '/api/auth/account/export', { cookie })).status);
    expect(statuses).toEqual([200, 200, 429]);
  });

  test('/account offers "Download my data", a plain link to the export', async () => {
    const cookie = cookieFrom(await t.request('POST', '/api/auth/register', { json: { email: 'me@example.com', password: STRONG_PASSWORD } }), SESSION)!;
    const page = await (await t.request('GET', '/account', { cookie })).text();
    expect(page).toContain('<a id="download-data" class="button secondary" href="/api/auth/account/export" download>Download my data</a>');
  });
});

test('gatehouse users export writes what the admin API writes', { timeout: 60_000 }, async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'gatehouse-export-'));
  const databaseUrl = `sqlite:${path.join(dir, 'gatehouse.db')}`;
  const g = await createTestGatehouse('sqlite', { env });
  try {
    const run = (args: string[], input = '') =>
      new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
        const child = execFile(
          process.execPath,
          [path.resolve('dist/cli.js'), ...args],
          { env: { PATH: process.env.PATH ?? '', JWT_SECRET: TEST_JWT_SECRET, LOG_LEVEL: 'silent', DATABASE_URL: databaseUrl } },
          (error, stdout, stderr) => resolve({ code: error === null ? 0 : Number(error.code), stdout, stderr }),
        );
        child.stdin?.end(input);
      });
    const source = [
      JSON.stringify({ email: 'a@example.com', externalId: 'x1', password: { algorithm: 'bcrypt', hash: BCRYPT_HASH } }),
      JSON.stringify({ email: 'b@example.com', providers: [{ provider: 'github', providerUserId: '5' }] }),
    ].join('\n');
    expect((await run(['users', 'import', '-'], source)).code).toBe(0);
    await admin(g, source);
    const viaCli = await run(['users', 'export', '--include-password-hashes']);
    expect(viaCli.code).toBe(0);
    const viaApi = await (await g.request('GET', '/api/admin/users/export?includePasswordHashes=true', { headers: { authorization: `Bearer ${KEY}` } })).text();
    const strip = (text: string) => linesOf(text).map((l) => ({ ...l, createdAt: undefined }));
    expect(strip(viaCli.stdout)).toEqual(strip(viaApi));
    expect(linesOf(viaCli.stdout)).toHaveLength(2);
  } finally {
    await g.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

async function admin(g: TestGatehouse, body: string): Promise<void> {
  const response = await g.request('POST', '/api/admin/users/import', {
    body,
    headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/x-ndjson' },
  });
  expect(response.status).toBe(200);
}
