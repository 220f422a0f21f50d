/**
 * `gatehouse orgs …`: the built CLI (`npm run build`) run as a process against a SQLite file and a
 * throwaway PostgreSQL schema, while a Gatehouse in this process, on the same database, lets people
 * create and join organizations through /api/orgs. list (a table, ndjson, csv, pages with the
 * cursor on stderr), show by slug or id with members and roles, delete refused without --yes and
 * done with it (audited with actor cli); `gatehouse users delete` of an organization's only owner
 * is refused with the reason and exit 1. Never a stack trace.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { MockClock } from '../src/clock.js';
import { loadConfig } from '../src/config.js';
import { createGatehouse, type Gatehouse } from '../src/gatehouse.js';
import { createLogger } from '../src/logger.js';
import { STRONG_PASSWORD, TEST_JWT_SECRET, cookieFrom } from './support/harness.js';
import { postgresUrl } from './support/services.js';
import { throwawaySchemaUrl } from './support/throwaway-schema.js';

const CLI = path.resolve('dist/cli.js');

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

interface Person {
  id: string;
  email: string;
  cookie: string;
}

const targets = [
  { name: 'SQLite file', kind: 'sqlite' as const, available: true },
  { name: 'PostgreSQL', kind: 'postgres' as const, available: postgresUrl !== null },
];

for (const target of targets) {
  describe.skipIf(!target.available)(`gatehouse orgs [${target.name}]`, { timeout: 180_000 }, () => {
    const cleanups: (() => Promise<void>)[] = [];
    const clock = new MockClock(Date.UTC(2026, 10, 22, 12, 0, 0));
    let env: Record<string, string>;
    let gatehouse: Gatehouse;
    let ana: Person;
    let bo: Person;
    const ids: Record<string, string> = {};

    const run = (...args: string[]): Promise<Run> =>
      new Promise((resolve) => {
        execFile(process.execPath, [CLI, ...args], { env: { PATH: process.env.PATH ?? '', ...env }, timeout: 60_000 }, (error, stdout, stderr) => {
          const code = error === null ? 0 : typeof error.code === 'number' ? error.code : -1;
          resolve({ code, stdout, stderr });
        });
      });
    const expectNoStack = (result: Run) => {
      expect(result.stderr).not.toMatch(/\n\s+at /);
      expect(result.stderr).not.toMatch(/Error:/);
    };
    const request = (method: string, url: string, options: { json?: unknown; cookie?: string } = {}) =>
      gatehouse.fetch(
        new Request(`http://localhost:3000${url}`, {
          method,
          headers: { ...(options.json === undefined ? {} : { 'content-type': 'application/json' }), ...(options.cookie ? { cookie: options.cookie } : {}) },
          body: options.json === undefined ? undefined : JSON.stringify(options.json),
        }),
        { remoteAddress: '203.0.113.77' },
      );
    /** Registers and verifies the address (development mode hands the token back, as the email would). */
    const person = async (email: string): Promise<Person> => {
      const registered = await request('POST', '/api/auth/register', { json: { email, password: STRONG_PASSWORD } });
      expect(registered.status).toBe(201);
      const { verificationToken } = (await registered.json()) as { verificationToken: string };
      const cookie = cookieFrom(registered, 'gatehouse_session')!;
      expect((await request('POST', '/api/auth/verify-email', { json: { token: verificationToken }, cookie })).status).toBe(200);
      const session = (await (await request('GET', '/api/auth/session', { cookie })).json()) as { user: { id: string } };
      return { id: session.user.id, email, cookie };
    };
    const createOrg = async (owner: Person, name: string, slug: string): Promise<void> => {
      clock.advance(1000);
      const created = await request('POST', '/api/orgs', { json: { name, slug }, cookie: owner.cookie });
      expect(created.status).toBe(201);
      ids[slug] = ((await created.json()) as { organization: { id: string } }).organization.id;
    };

    beforeAll(async () => {
      env = { JWT_SECRET: TEST_JWT_SECRET, BCRYPT_ROUNDS: '4', LOG_LEVEL: 'silent', LOG_FORMAT: 'json', ENV_FILE: '/dev/null' };
      if (target.kind === 'sqlite') {
        const dir = mkdtempSync(path.join(os.tmpdir(), 'gatehouse-cli-orgs-'));
        cleanups.push(async () => rmSync(dir, { recursive: true, force: true }));
        env.DATABASE_URL = `sqlite:${path.join(dir, 'gatehouse.db')}`;
        env.DATA_DIR = dir;
      } else {
        env.DATABASE_URL = await throwawaySchemaUrl((cleanup) => cleanups.push(cleanup));
      }
      gatehouse = await createGatehouse(
        loadConfig({
          ...env,
          NODE_ENV: 'development',
          BASE_URL: 'http://localhost:3000',
          RATE_LIMIT_REGISTER: '1000/15m',
          RATE_LIMIT_VERIFY_EMAIL: '1000/15m',
        }),
        { clock, logger: createLogger({ level: 'silent' }), mailer: { send: async () => {} } },
      );
      ana = await person('ana@example.com');
      bo = await person('bo@example.com');
      await createOrg(ana, 'Acme Corp', 'acme');
      await createOrg(bo, 'Beta Labs', 'beta');
      await createOrg(ana, 'Acme Research', 'acme-research');
      // Bo joins Acme as an admin.
      const invited = await request('POST', `/api/orgs/${ids.acme}/invitations`, { json: { email: bo.email, role: 'admin' }, cookie: ana.cookie });
      expect(invited.status).toBe(201);
      clock.advance(1000);
      const { token } = (await invited.json()) as { token: string };
      expect((await request('POST', '/api/orgs/invitations/accept', { json: { token }, cookie: bo.cookie })).status).toBe(200);
    });
    afterAll(async () => {
      await gatehouse?.close();
      for (const cleanup of cleanups.reverse()) await cleanup();
    });

    test('list: a table oldest first with member counts, --query, ndjson and csv, --limit pages with the cursor on stderr', async () => {
      const listed = await run('orgs', 'list');
      expect([listed.code, listed.stderr]).toEqual([0, '']);
      const lines = listed.stdout.trim().split('\n');
      expect(lines[0]).toMatch(/^id\s+name\s+slug\s+members\s+createdAt$/);
      expect(lines.slice(1).map((line) => line.split(/\s{2,}/))).toEqual([
        [ids.acme, 'Acme Corp', 'acme', '2', expect.stringMatching(/^2026-11-22T12:00:01/)],
        [ids.beta, 'Beta Labs', 'beta', '1', expect.stringMatching(/^2026-11-22T12:00:02/)],
        [ids['acme-research'], 'Acme Research', 'acme-research', '1', expect.stringMatching(/^2026-11-22T12:00:03/)],
      ]);

      const ndjson = await run('orgs', 'list', '--query', 'ACME', '--format', 'ndjson');
      expect(
        ndjson.stdout
          .trim()
          .split('\n')
          .map((line) => JSON.parse(line) as unknown),
      ).toEqual([
        { id: ids.acme, name: 'Acme Corp', slug: 'acme', createdAt: expect.any(String), members: 2 },
        { id: ids['acme-research'], name: 'Acme Research', slug: 'acme-research', createdAt: expect.any(String), members: 1 },
      ]);
      const csv = await run('orgs', 'list', '--query', ids.beta!, '--format', 'csv');
      expect(csv.stdout.trim().split('\n')).toEqual([
        '"id","name","slug","members","createdAt"',
        expect.stringMatching(`^"${ids.beta}","Beta Labs","beta","1","2026`),
      ]);

      const paged = await run('orgs', 'list', '--limit', '2', '--format', 'ndjson');
      expect(
        paged.stdout
          .trim()
          .split('\n')
          .map((line) => (JSON.parse(line) as { slug: string }).slug),
      ).toEqual(['acme', 'beta']);
      const cursor = /^More organizations follow: --cursor (\S+)$/m.exec(paged.stderr)?.[1];
      expect(cursor).toBeDefined();
      const rest = await run('orgs', 'list', '--cursor', cursor!, '--format', 'ndjson');
      expect([rest.stdout.trim(), rest.stderr]).toEqual([expect.stringContaining('"slug":"acme-research"'), '']);
      expect((await run('orgs', 'list', '--query', 'nothing-like-it')).stdout.trim()).toBe('No organizations.');
    });

    test('show by slug or id: the organization and its members with their roles; an unknown one is a message and exit 1', async () => {
      for (const reference of ['acme', ids.acme!]) {
        const shown = await run('orgs', 'show', reference);
        expect([shown.code, shown.stderr]).toEqual([0, '']);
        expect(shown.stdout).toMatch(new RegExp(`^id:\\s+${ids.acme}$`, 'm'));
        expect(shown.stdout).toMatch(/^name:\s+Acme Corp$/m);
        expect(shown.stdout).toMatch(/^slug:\s+acme$/m);
        expect(shown.stdout).toMatch(/^members:\s+2$/m);
        expect(shown.stdout).toMatch(/^userId\s+email\s+role\s+joinedAt$/m);
        expect(shown.stdout).toMatch(new RegExp(`^${ana.id}\\s+ana@example.com\\s+owner\\s+2026-`, 'm'));
        expect(shown.stdout).toMatch(new RegExp(`^${bo.id}\\s+bo@example.com\\s+admin\\s+2026-`, 'm'));
      }
      for (const reference of ['no-such-org', '00000000-0000-4000-8000-000000000000', 'Not A Slug!']) {
        const missing = await run('orgs', 'show', reference);
        expect([missing.code, missing.stderr.trim(), missing.stdout]).toEqual([1, 'No such organization.', '']);
      }
    });

    test('bad arguments exit 2 with the usage, never a stack trace', async () => {
      const results: Run[] = [];
      for (const args of [
        ['orgs'],
        ['orgs', 'frobnicate'],
        ['orgs', 'show'],
        ['orgs', 'show', 'acme', 'beta'],
        ['orgs', 'list', '--limit', '0'],
        ['orgs', 'list', '--format', 'xml'],
        ['orgs', 'list', '--cursor', 'not-a-cursor'],
        ['orgs', 'list', '--nope'],
      ]) {
        results.push(await run(...args));
      }
      for (const result of results) {
        expect(result.code).toBe(2);
        expect(result.stderr).toContain('Usage: gatehouse orgs');
        expectNoStack(result);
      }
      expect(results[4]!.stderr).toMatch(/^--limit: must be a whole number from 1 to 100$/m);
      expect(results[6]!.stderr).toMatch(/^--cursor: is not a cursor from this list$/m);
    });

    test("users delete of an organization's only owner: the reason and exit 1; orgs delete needs --yes, then deletes it, audited with actor cli", async () => {
      const refused = await run('users', 'delete', 'ana@example.com', '--yes');
      expect([refused.code, refused.stdout]).toEqual([1, '']);
      expect(refused.stderr.trim()).toBe(
        'This account is the only owner of an organization that has other members. Make someone else an owner there first, or delete it.',
      );
      expectNoStack(refused);
      expect(await gatehouse.stores.users.findUserById(ana.id)).not.toBeNull();

      const unconfirmed = await run('orgs', 'delete', 'acme');
      expect(unconfirmed.code).toBe(2);
      expect(unconfirmed.stderr).toMatch(/^orgs delete removes the organization for every member, for good: add --yes to confirm\.$/m);
      expectNoStack(unconfirmed);
      expect((await run('orgs', 'show', 'acme')).code).toBe(0);

      const deleted = await run('orgs', 'delete', 'acme', '--yes');
      expect([deleted.code, deleted.stdout.trim(), deleted.stderr]).toEqual([0, `Deleted organization acme (${ids.acme}).`, '']);
      expect((await run('orgs', 'show', 'acme')).code).toBe(1);
      const orgsOfBo = (await (await request('GET', '/api/orgs', { cookie: bo.cookie })).json()) as { organizations: { slug: string }[] };
      expect(orgsOfBo.organizations.map((org) => org.slug)).toEqual(['beta']);
      const again = await run('orgs', 'delete', ids.acme!, '--yes');
      expect([again.code, again.stderr.trim()]).toEqual([1, 'No such organization.']);

      const audit = await run('audit', '--type', 'org_deleted', '--format', 'ndjson');
      expect(
        audit.stdout
          .trim()
          .split('\n')
          .map((line) => JSON.parse(line) as unknown),
      ).toEqual([
        expect.objectContaining({
          userId: null,
          ip: null,
          userAgent: 'gatehouse-cli',
          metadata: { actor: 'cli', organizationId: ids.acme, name: 'Acme Corp', slug: 'acme', members: 2 },
        }),
      ]);

      // Ana now owns only Acme Research, alone: it goes with her account.
      const gone = await run('users', 'delete', 'ana@example.com', '--yes');
      expect([gone.code, gone.stdout.trim()]).toEqual([0, 'Deleted ana@example.com.']);
      expect(
        (await run('orgs', 'list', '--format', 'ndjson')).stdout
          .trim()
          .split('\n')
          .map((line) => (JSON.parse(line) as { slug: string }).slug),
      ).toEqual(['beta']);
    });
  });
}
