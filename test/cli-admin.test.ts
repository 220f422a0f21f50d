/**
 * `gatehouse users …` and `gatehouse audit …` (DESIGN §9.6): the built CLI (`npm run build`)
 * run as a process against a SQLite file (limits in Redis) and against a throwaway PostgreSQL
 * schema (limits in PostgreSQL), while a Gatehouse in this process serves sign-ins on the same
 * database and limit store.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { loadConfig } from '../src/config.js';
import { createGatehouse, type Gatehouse } from '../src/gatehouse.js';
import { createLogger } from '../src/logger.js';
import { STRONG_PASSWORD, TEST_JWT_SECRET } from './support/harness.js';
import { postgresUrl, redisUrl } from './support/services.js';
import { throwawaySchemaUrl } from './support/throwaway-schema.js';

const CLI = path.resolve('dist/cli.js');

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** Parses RFC 4180 CSV (quoted fields, doubled quotes, commas and line breaks inside quotes). */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const char = text[i];
    if (quoted) {
      if (char === '"' && text[i + 1] === '"') {
        field += '"';
        i++;
      } else if (char === '"') quoted = false;
      else field += char;
    } else if (char === '"') quoted = true;
    else if (char === ',') {
      row.push(field);
      field = '';
    } else if (char === '\n') {
      row.push(field);
      rows.push(row);
      row = [];
      field = '';
    } else field += char;
  }
  if (field !== '' || row.length > 0) rows.push([...row, field]);
  return rows;
}

const targets = [
  { name: 'SQLite file, limits in Redis', kind: 'sqlite' as const, available: redisUrl !== null },
  { name: 'PostgreSQL, limits in PostgreSQL', kind: 'postgres' as const, available: postgresUrl !== null },
];

for (const target of targets) {
  describe.skipIf(!target.available)(`gatehouse users / audit [${target.name}]`, { timeout: 180_000 }, () => {
    const cleanups: (() => Promise<void>)[] = [];
    let env: Record<string, string>;
    let gatehouse: Gatehouse;

    const run = (...args: string[]): Promise<Run> =>
      new Promise((resolve) => {
        execFile(process.execPath, [CLI, ...args], { env: { PATH: process.env.PATH ?? '', ...env }, timeout: 60_000 }, (error, stdout, stderr) => {
          const code = error === null ? 0 : typeof error.code === 'number' ? error.code : -1;
          resolve({ code, stdout, stderr });
        });
      });
    const request = (method: string, url: string, json?: unknown) =>
      gatehouse.fetch(
        new Request(`http://localhost:3000${url}`, {
          method,
          headers: json === undefined ? {} : { 'content-type': 'application/json' },
          body: json === undefined ? undefined : JSON.stringify(json),
        }),
        { remoteAddress: '203.0.113.77' },
      );
    const login = (email: string, password = STRONG_PASSWORD) => request('POST', '/api/auth/login', { email, password });
    const expectNoStack = (result: Run) => {
      expect(result.stderr).not.toMatch(/\n\s+at /);
      expect(result.stderr).not.toMatch(/Error:/);
    };

    beforeAll(async () => {
      env = {
        JWT_SECRET: TEST_JWT_SECRET,
        BCRYPT_ROUNDS: '4',
        LOG_LEVEL: 'silent',
        LOG_FORMAT: 'json',
        RATE_LIMIT_LOGIN: '1000/15m',
        RATE_LIMIT_REGISTER: '1000/15m',
      };
      if (target.kind === 'sqlite') {
        const dir = mkdtempSync(path.join(os.tmpdir(), 'gatehouse-cli-'));
        cleanups.push(async () => rmSync(dir, { recursive: true, force: true }));
        env.DATABASE_URL = `sqlite:${path.join(dir, 'gatehouse.db')}`;
        env.REDIS_URL = redisUrl!;
        env.REDIS_KEY_PREFIX = `gh-cli-${randomBytes(4).toString('hex')}`;
      } else {
        env.DATABASE_URL = await throwawaySchemaUrl((cleanup) => cleanups.push(cleanup));
      }
      gatehouse = await createGatehouse(loadConfig({ ...env, BASE_URL: 'http://localhost:3000' }), {
        logger: createLogger({ level: 'silent' }),
        mailer: { send: async () => {} },
      });
      for (const email of ['ana@example.com', 'bo@example.com', 'cy@example.org']) {
        expect((await request('POST', '/api/auth/register', { email, password: STRONG_PASSWORD })).status).toBe(201);
      }
    });
    afterAll(async () => {
      await gatehouse?.close();
      for (const cleanup of cleanups.reverse()) await cleanup();
    });

    test('users list: a table, ndjson and csv; --query filters; --limit pages with a cursor on stderr', async () => {
      const listed = await run('users', 'list');
      expect(listed.code).toBe(0);
      const lines = listed.stdout.trim().split('\n');
      expect(lines[0]).toMatch(/^id\s+email\s+emailVerified/);
      expect(lines.slice(1).map((line) => line.split(/\s+/)[1])).toEqual(['ana@example.com', 'bo@example.com', 'cy@example.org']);
      const ndjson = await run('users', 'list', '--query', 'EXAMPLE.COM', '--format', 'ndjson');
      const users = ndjson.stdout
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as { email: string; disabledAt: string | null });
      expect(users.map((user) => user.email)).toEqual(['ana@example.com', 'bo@example.com']);
      const paged = await run('users', 'list', '--limit', '2', '--format', 'csv');
      const rows = parseCsv(paged.stdout);
      expect(rows[0]).toEqual(['id', 'email', 'emailVerified', 'hasPassword', 'createdAt', 'lastLoginAt', 'disabledAt']);
      expect(rows.slice(1).map((row) => row[1])).toEqual(['ana@example.com', 'bo@example.com']);
      const cursor = /--cursor (\S+)/.exec(paged.stderr)?.[1];
      expect(cursor).toBeDefined();
      const rest = await run('users', 'list', '--cursor', cursor!, '--format', 'ndjson');
      expect(
        rest.stdout
          .trim()
          .split('\n')
          .map((line) => (JSON.parse(line) as { email: string }).email),
      ).toEqual(['cy@example.org']);
    });

    test('users show by email and by id; an unknown user is a message and exit 1', async () => {
      const user = (await gatehouse.stores.users.findUserByEmail('ana@example.com'))!;
      for (const reference of ['ana@example.com', 'ANA@example.com', user.id]) {
        const shown = await run('users', 'show', reference);
        expect(shown.code).toBe(0);
        expect(shown.stdout).toMatch(new RegExp(`^id:\\s+${user.id}$`, 'm'));
        expect(shown.stdout).toMatch(/^email:\s+ana@example.com$/m);
        expect(shown.stdout).toMatch(/^sessions:\s+1$/m);
        expect(shown.stdout).toMatch(/^twoFactor:\s+\{"enabled":false/m);
      }
      for (const reference of ['nobody@example.com', '00000000-0000-4000-8000-000000000000', 'not-an-id']) {
        const missing = await run('users', 'show', reference);
        expect([missing.code, missing.stderr.trim(), missing.stdout]).toEqual([1, 'No such user.', '']);
      }
    });

    test('disable refuses sign-in (403 account_disabled) and ends sessions; enable lets them in; audited with actor cli', async () => {
      const user = (await gatehouse.stores.users.findUserByEmail('bo@example.com'))!;
      const disabled = await run('users', 'disable', 'bo@example.com');
      expect([disabled.code, disabled.stdout.trim()]).toEqual([0, 'Disabled bo@example.com; 1 session(s) revoked.']);
      expect((await run('users', 'show', user.id)).stdout).toMatch(/^disabledAt:\s+\d{4}-\d\d-\d\dT/m);
      const refused = await login('bo@example.com');
      expect([refused.status, ((await refused.json()) as { error: string }).error]).toEqual([403, 'account_disabled']);
      expect((await run('users', 'enable', user.id)).code).toBe(0);
      expect((await login('bo@example.com')).status).toBe(200);
      const audit = await run('audit', '--user', 'bo@example.com', '--format', 'ndjson');
      const events = audit.stdout
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as { type: string; userId: string; ip: string | null; userAgent: string | null; metadata: Record<string, unknown> });
      expect(events.slice(0, 4).map((event) => event.type)).toEqual(['login_success', 'admin_user_enabled', 'login_failure', 'admin_user_disabled']);
      expect(events[2]).toMatchObject({ userId: user.id, metadata: { reason: 'account_disabled', method: 'password' } });
      expect(events[3]).toMatchObject({ userId: user.id, ip: null, userAgent: 'gatehouse-cli', metadata: { actor: 'cli', sessionsRevoked: 1 } });
    });

    test('unlock lifts a login lock counted by the server: 429 account_locked → unlock → sign-in', async () => {
      for (let i = 0; i < 5; i++) await login('cy@example.org', 'Wrong-Password-1');
      const locked = await login('cy@example.org');
      expect([locked.status, ((await locked.json()) as { error: string }).error]).toEqual([429, 'account_locked']);
      expect((await run('users', 'show', 'cy@example.org')).stdout).toMatch(/^lockedForSeconds:\s+\d+$/m);
      const unlocked = await run('users', 'unlock', 'cy@example.org');
      expect([unlocked.code, unlocked.stdout.trim()]).toEqual([0, 'Unlocked cy@example.org.']);
      expect((await run('users', 'show', 'cy@example.org')).stdout).toMatch(/^lockedForSeconds:\s+-$/m);
      // The IP's own count is not the account's: the owner signs in from elsewhere.
      const response = await gatehouse.fetch(
        new Request('http://localhost:3000/api/auth/login', {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ email: 'cy@example.org', password: STRONG_PASSWORD }),
        }),
        { remoteAddress: '198.51.100.9' },
      );
      expect(response.status).toBe(200);
    });

    test('delete asks for --yes (exit 2), then deletes; the audit rows stay under the id; audit in table, ndjson and csv', async () => {
      const user = (await gatehouse.stores.users.findUserByEmail('ana@example.com'))!;
      const unconfirmed = await run('users', 'delete', 'ana@example.com');
      expect(unconfirmed.code).toBe(2);
      expect(unconfirmed.stderr).toContain('--yes');
      expect(await gatehouse.stores.users.findUserById(user.id)).not.toBeNull();
      const deleted = await run('users', 'delete', 'ana@example.com', '--yes');
      expect([deleted.code, deleted.stdout.trim()]).toEqual([0, 'Deleted ana@example.com.']);
      expect(await gatehouse.stores.users.findUserById(user.id)).toBeNull();
      expect((await run('users', 'show', user.id)).code).toBe(1);

      const ndjson = await run('audit', '--user', user.id, '--format', 'ndjson');
      const events = ndjson.stdout
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as { id: number; type: string; metadata: Record<string, unknown> });
      expect(events.map((event) => event.type)).toEqual(['admin_user_deleted', 'user_created']);
      expect(events[0]!.metadata).toEqual({ actor: 'cli' });
      expect(ndjson.stdout).not.toContain('ana@example.com');

      const csv = parseCsv((await run('audit', '--type', 'admin_user_disabled', '--format', 'csv')).stdout);
      expect(csv[0]).toEqual(['id', 'at', 'type', 'userId', 'ip', 'userAgent', 'metadata']);
      expect(csv).toHaveLength(2);
      expect(csv[1]![2]).toBe('admin_user_disabled');
      expect(JSON.parse(csv[1]![6]!)).toEqual({ actor: 'cli', sessionsRevoked: 1, alreadyDisabled: false });

      const table = await run('audit', '--limit', '3');
      const lines = table.stdout.trim().split('\n');
      expect(lines[0]).toMatch(/^id\s+at\s+type\s+userId\s+ip\s+userAgent\s+metadata$/);
      expect(lines).toHaveLength(4);
      expect(lines[1]).toContain('admin_user_deleted');

      const since = new Date(Date.now() + 3600_000).toISOString();
      expect((await run('audit', '--since', since)).stdout.trim()).toBe('No audit events match.');
    });

    test('bad arguments: a clear message and the usage on stderr, exit 2, never a stack trace', async () => {
      const cases = [
        ['users'],
        ['users', 'frobnicate'],
        ['users', 'list', '--limit', '0'],
        ['users', 'list', '--limit', 'lots'],
        ['users', 'list', '--cursor', 'garbage'],
        ['users', 'list', '--query', 'ana\u001b[2J'],
        ['users', 'list', '--bogus'],
        ['users', 'list', 'extra'],
        ['users', 'show'],
        ['users', 'disable', 'a@example.com', 'b@example.com'],
        ['users', 'list', '--format', 'xml'],
        ['audit', '--since', 'yesterday'],
        ['audit', '--until', '2026-02-30T25:00:00Z'],
        ['audit', '--since', '2026-02-30'],
        ['audit', '--limit', '-5'],
        ['audit', '--type', 'Robert; DROP TABLE'],
        ['audit', '--format'],
        ['audit', 'positional'],
      ];
      // Four processes at a time: the machine that runs the suite may have two cores for everything.
      const results: { args: string[]; result: Run }[] = [];
      for (let i = 0; i < cases.length; i += 4) {
        results.push(...(await Promise.all(cases.slice(i, i + 4).map(async (args) => ({ args, result: await run(...args) })))));
      }
      for (const { args, result } of results) {
        expect([args, result.code]).toEqual([args, 2]);
        expect(result.stderr).toMatch(/Usage: gatehouse (users|audit)/);
        expectNoStack(result);
      }
      const unknownUser = await run('audit', '--user', 'nobody@example.com');
      expect([unknownUser.code, unknownUser.stderr.trim()]).toEqual([1, 'No such user.']);
      expect((await run('users', '--help')).code).toBe(0);
    });
  });
}
