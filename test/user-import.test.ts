/**
 * User import (docs/operations.md, "Importing and exporting users"): `POST
 * /api/admin/users/import` on every available database, and `gatehouse users import` as a
 * process (the built CLI, `npm run build`) against a SQLite file and a PostgreSQL schema. Dry
 * runs write nothing; skip, update and fail; one result per line; exit codes 0, 1 and 2; a bad
 * line never stops the file; a standard bcrypt hash signs in as it was imported.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import bcrypt from 'bcrypt';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import { loadConfig } from '../src/config.js';
import { createGatehouse, type Gatehouse } from '../src/gatehouse.js';
import { createLogger } from '../src/logger.js';
import { TEST_JWT_SECRET, createTestGatehouse, describeEachDialect, type TestGatehouse } from './support/harness.js';
import { postgresUrl } from './support/services.js';
import { throwawaySchemaUrl } from './support/throwaway-schema.js';

const KEY = 'admin-key-for-tests-0123456789-abcdefghij';
/** Our own known answer: a standard bcrypt hash ($2b$, cost 4) of this password, made here. */
const IMPORTED_PASSWORD = 'Imported-Pass-42';
const BCRYPT_HASH = bcrypt.hashSync(IMPORTED_PASSWORD, 4);

const line = (value: unknown): string => JSON.stringify(value);
/** Six lines: three users, bad JSON, a bad email, a hash no algorithm reads; and a blank line. */
const MIXED = [
  line({
    email: 'Ana@Example.com',
    emailVerified: true,
    createdAt: '2020-01-02T03:04:05.000Z',
    externalId: 'u-1',
    password: { algorithm: 'bcrypt', hash: BCRYPT_HASH },
  }),
  '{"email": "broken',
  line({ email: 'not-an-email', password: { algorithm: 'bcrypt', hash: BCRYPT_HASH } }),
  line({ email: 'bo@example.com', password: { algorithm: 'bcrypt', hash: 'not-a-hash' } }),
  '',
  line({ email: 'cy@example.com', disabled: true, password: { algorithm: 'bcrypt', hash: BCRYPT_HASH } }),
  line({ email: 'di@example.com', providers: [{ provider: 'github', providerUserId: '4242', login: 'di' }] }),
].join('\n');

describeEachDialect('POST /api/admin/users/import', (dialect) => {
  let t: TestGatehouse;
  beforeEach(async () => {
    t = await createTestGatehouse(dialect, { env: { ADMIN_API_KEY: KEY, RATE_LIMIT_ADMIN: '1000/1m', RATE_LIMIT_LOGIN: '1000/15m' } });
  });
  afterEach(async () => {
    await t.close();
  });
  const importBody = (body: string, query = '', headers: Record<string, string> = {}) =>
    t.request('POST', `/api/admin/users/import${query}`, {
      body,
      headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/x-ndjson', ...headers },
    });
  const login = (email: string, password = IMPORTED_PASSWORD) => t.request('POST', '/api/auth/login', { json: { email, password } });
  const userCount = async () =>
    (
      await t.database.kysely
        .selectFrom('users')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .executeTakeFirstOrThrow()
    ).n;

  test('dry run: every line checked, the refused ones with their numbers; nothing written, nothing audited', async () => {
    const response = await importBody(MIXED, '?dryRun=true');
    expect(response.status).toBe(200);
    const body = await response.json();
    expect(body).toMatchObject({ imported: 3, updated: 0, skipped: 0, dryRun: true });
    expect(body.failed.map((f: { line: number }) => f.line)).toEqual([2, 3, 4]);
    expect(Number(await userCount())).toBe(0);
    expect((await t.gatehouse.stores.audit.listRecentEvents(50)).some((e) => e.type === 'users_imported')).toBe(false);
  });

  test('import: bad lines refused with reasons, the rest stored; the bcrypt hash signs in; a second run imports nothing twice', async () => {
    const body = await (await importBody(MIXED)).json();
    expect(body.imported).toBe(3);
    expect(body.failed).toEqual([
      { line: 2, error: 'not valid JSON' },
      { line: 3, error: expect.stringMatching(/^email: /) },
      { line: 4, error: expect.stringMatching(/^password: /) },
    ]);
    const ana = await t.database.kysely.selectFrom('users').selectAll().where('email', '=', 'ana@example.com').executeTakeFirstOrThrow();
    expect([ana.external_id, Number(ana.created_at), ana.email_verified]).toEqual(['u-1', Date.UTC(2020, 0, 2, 3, 4, 5), 1]);
    // Stored as given, never hashed again.
    expect(ana.password_hash).toContain(BCRYPT_HASH.slice(7));
    expect((await login('ana@example.com')).status).toBe(200);
    expect((await login('ana@example.com', 'wrong-password-1')).status).toBe(401);
    // Disabled: the right password does not let them in.
    expect((await login('cy@example.com')).status).not.toBe(200);
    const link = await t.database.kysely.selectFrom('accounts').selectAll().where('provider_account_id', '=', '4242').executeTakeFirstOrThrow();
    expect([link.provider, link.provider_login, link.access_token_enc]).toEqual(['github', 'di', '']);

    const again = await (await importBody(MIXED)).json();
    expect([again.imported, again.skipped, again.failed.length]).toEqual([0, 3, 3]);
    expect(Number(await userCount())).toBe(3);
    const audited = (await t.gatehouse.stores.audit.listRecentEvents(50)).filter((e) => e.type === 'users_imported');
    expect(audited.map((e) => e.metadata)).toContainEqual({ actor: 'admin', onConflict: 'skip', imported: 3, updated: 0, skipped: 0, failed: 3 });
  });

  test('onConflict: fail refuses the line (not the file), update changes the user, an externalId of another user is refused', async () => {
    await importBody(line({ email: 'ana@example.com', externalId: 'u-1' }));
    const failed = await (await importBody([line({ email: 'ana@example.com' }), line({ email: 'new@example.com' })].join('\n'), '?onConflict=fail')).json();
    expect(failed).toMatchObject({ imported: 1, failed: [{ line: 1, error: 'email: a user with this email exists' }] });
    const updated = await (
      await importBody(line({ email: 'ana@example.com', emailVerified: true, password: { algorithm: 'bcrypt', hash: BCRYPT_HASH } }), '?onConflict=update')
    ).json();
    expect([updated.updated, updated.failed]).toEqual([1, []]);
    expect((await login('ana@example.com')).status).toBe(200);
    const clash = await (await importBody(line({ email: 'new@example.com', externalId: 'u-1' }), '?onConflict=update')).json();
    expect(clash.failed).toEqual([{ line: 1, error: 'externalId: belongs to another user' }]);
  });

  test('onConflict=update with disabled: true ends the sessions the user holds; disabled: false lets them in again', async () => {
    await importBody(line({ email: 'ana@example.com', password: { algorithm: 'bcrypt', hash: BCRYPT_HASH } }));
    const signedIn = await login('ana@example.com');
    const cookie = signedIn.headers
      .getSetCookie()
      .find((c) => c.startsWith('gatehouse_session='))!
      .split(';')[0]!;
    expect((await t.request('GET', '/api/auth/session', { cookie })).status).toBe(200);
    expect((await (await importBody(line({ email: 'ana@example.com', disabled: true }), '?onConflict=update')).json()).updated).toBe(1);
    expect((await t.request('GET', '/api/auth/session', { cookie })).status).toBe(401);
    expect((await login('ana@example.com')).status).toBe(403);
    await importBody(line({ email: 'ana@example.com', disabled: false }), '?onConflict=update');
    expect((await login('ana@example.com')).status).toBe(200);
  });

  test('a file of several batches: line numbers run on across them, a bad line in the middle stops nothing', async () => {
    const lines = Array.from({ length: 1201 }, (_, i) => (i === 700 ? '[1, 2]' : line({ email: `p${i}@example.com`, externalId: `e${i}` })));
    const body = await (await importBody(lines.join('\n'))).json();
    expect([body.imported, body.failed]).toEqual([1200, [{ line: 701, error: 'expected a JSON object' }]]);
    expect(Number(await userCount())).toBe(1200);
    const again = await (await importBody(lines.join('\n'))).json();
    expect([again.imported, again.skipped]).toEqual([0, 1200]);
  });

  test('the admin key, the media type, the 10 MiB bound and the query are checked', async () => {
    const noKey = await t.request('POST', '/api/admin/users/import', { body: MIXED, headers: { 'content-type': 'application/x-ndjson' } });
    expect(noKey.status).toBe(401);
    expect((await t.request('GET', '/api/admin/users/export', { headers: { authorization: 'Bearer wrong-key' } })).status).toBe(401);
    expect((await importBody(MIXED, '', { 'content-type': 'application/json' })).status).toBe(415);
    const big = await importBody(`${line({ email: 'a@example.com' })}\n`.repeat(1 + (10 * 1024 * 1024) / 20));
    expect([big.status, (await big.json()).error]).toEqual([413, 'payload_too_large']);
    const bad = await importBody(MIXED, '?onConflict=maybe');
    expect([bad.status, (await bad.json()).error]).toEqual([400, 'validation_error']);
    expect(Number(await userCount())).toBe(0);
  });
});

const CLI = path.resolve('dist/cli.js');
const targets = [
  { name: 'SQLite file', kind: 'sqlite' as const, available: true },
  { name: 'PostgreSQL', kind: 'postgres' as const, available: postgresUrl !== null },
];

for (const target of targets) {
  describe.skipIf(!target.available)(`gatehouse users import [${target.name}]`, { timeout: 120_000 }, () => {
    const cleanups: (() => Promise<void>)[] = [];
    let env: Record<string, string>;
    let dir: string;
    let gatehouse: Gatehouse;
    const run = (args: string[], input?: string): Promise<{ code: number; stdout: string; stderr: string }> =>
      new Promise((resolve) => {
        const child = execFile(
          process.execPath,
          [CLI, ...args],
          { env: { PATH: process.env.PATH ?? '', ...env }, timeout: 60_000 },
          (error, stdout, stderr) => {
            resolve({ code: error === null ? 0 : typeof error.code === 'number' ? error.code : -1, stdout, stderr });
          },
        );
        child.stdin?.end(input ?? '');
      });
    const file = (name: string, text: string): string => {
      const at = path.join(dir, name);
      writeFileSync(at, text);
      return at;
    };

    beforeAll(async () => {
      dir = mkdtempSync(path.join(os.tmpdir(), 'gatehouse-import-'));
      cleanups.push(async () => rmSync(dir, { recursive: true, force: true }));
      env = { JWT_SECRET: TEST_JWT_SECRET, BCRYPT_ROUNDS: '4', LOG_LEVEL: 'silent', RATE_LIMIT_LOGIN: '1000/15m' };
      env.DATABASE_URL = target.kind === 'sqlite' ? `sqlite:${path.join(dir, 'gatehouse.db')}` : await throwawaySchemaUrl((cleanup) => cleanups.push(cleanup));
      gatehouse = await createGatehouse(loadConfig({ ...env, BASE_URL: 'http://localhost:3000' }), {
        logger: createLogger({ level: 'silent' }),
        mailer: { send: async () => {} },
      });
    });
    afterAll(async () => {
      await gatehouse?.close();
      for (const cleanup of cleanups.reverse()) await cleanup();
    });
    const login = (email: string) =>
      gatehouse.fetch(
        new Request('http://localhost:3000/api/auth/login', {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ email, password: IMPORTED_PASSWORD }),
        }),
        { remoteAddress: '203.0.113.9' },
      );
    const exported = async () => (await run(['users', 'export'])).stdout.trim().split('\n').filter(Boolean);

    test('bad arguments exit 2 with the usage, and write nothing', async () => {
      for (const args of [
        ['users', 'import'],
        ['users', 'import', 'a', 'b'],
        ['users', 'import', '-', '--on-conflict', 'maybe'],
        ['users', 'import', path.join(dir, 'missing.ndjson')],
        ['users', 'import', '-', '--bogus'],
      ]) {
        const result = await run(args, MIXED);
        expect([args, result.code]).toEqual([args, 2]);
        expect(result.stderr).toContain('Usage: gatehouse users');
      }
      expect(await exported()).toEqual([]);
    });

    test('--dry-run writes nothing; a file with bad lines imports the rest and exits 1, each refusal with its line; --report has one line per input line', async () => {
      const source = file('mixed.ndjson', MIXED);
      const dry = await run(['users', 'import', source, '--dry-run']);
      expect([dry.code, dry.stdout.trim()]).toEqual([1, 'Imported 3, updated 0, skipped 0, refused 3 (dry run: nothing was written).']);
      expect(await exported()).toEqual([]);

      const report = path.join(dir, 'report.ndjson');
      const result = await run(['users', 'import', source, '--report', report]);
      expect(result.code).toBe(1);
      expect(result.stderr).toMatch(/^line 2: not valid JSON\nline 3: email: .*\nline 4: password: .*\n$/);
      const lines = readFileSync(report, 'utf8')
        .trim()
        .split('\n')
        .map((text) => JSON.parse(text) as { line: number; status: string });
      expect(lines.map((r) => [r.line, r.status])).toEqual([
        [1, 'imported'],
        [2, 'failed'],
        [3, 'failed'],
        [4, 'failed'],
        [6, 'imported'],
        [7, 'imported'],
      ]);
      expect((await login('ana@example.com')).status).toBe(200);
      expect(await exported()).toHaveLength(3);
    });

    test('from stdin (with a byte-order mark), twice: the second run skips everyone and exits 0; --on-conflict fail exits 1', async () => {
      // Saved with a byte-order mark, as some editors do: still line 1.
      const clean =
        '\uFEFF' + [line({ email: 'eve@example.com', password: { algorithm: 'bcrypt', hash: BCRYPT_HASH } }), line({ email: 'fay@example.com' })].join('\n');
      expect((await run(['users', 'import', '-'], clean)).stdout).toContain('Imported 2, updated 0, skipped 0, refused 0');
      const again = await run(['users', 'import', '-'], clean);
      expect([again.code, again.stdout.trim()]).toEqual([0, 'Imported 0, updated 0, skipped 2, refused 0.']);
      const fail = await run(['users', 'import', '-', '--on-conflict', 'fail'], clean);
      expect(fail.code).toBe(1);
      expect(fail.stderr).toContain('line 1: email: a user with this email exists');
      expect((await login('eve@example.com')).status).toBe(200);
    });
  });
}
