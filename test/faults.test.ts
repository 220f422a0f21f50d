/**
 * Faults (issue #8): what clients see when the database, the cache, the process or the disk
 * fails, against real servers. Outages of the shared PostgreSQL and Redis are made with a TCP
 * relay the test cuts (support/tcp-relay.ts), never by stopping them; the disk faults use a tiny
 * tmpfs mounted for the test (skipped with a message where mounting is not allowed).
 */
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import { openDatabase } from '../src/db/connect.js';
import { STRONG_PASSWORD, createTestGatehouse, type TestGatehouse } from './support/harness.js';
import { startServerProcess, type ServerProcess } from './support/server-process.js';
import { postgresUrl, redisUrl } from './support/services.js';
import { TcpRelay } from './support/tcp-relay.js';

/** No answer may take longer than this during a fault: a client must never hang on us. */
const MAX_ANSWER_MS = 5000;
const NO_LIMITS = {
  RATE_LIMIT_REGISTER: '999999999/1s',
  RATE_LIMIT_LOGIN: '999999999/1s',
};
/** What an answer must never reveal: driver codes, addresses, stack frames. */
const INTERNALS = /ECONN|EPIPE|SQLITE|postgres|Connection terminated|127\.0\.0\.1|\bat .+\(|node_modules|\.ts:\d+/i;

/** Whether something accepts TCP connections on this loopback port right now. */
function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

async function waitFor(check: () => Promise<boolean>, timeoutMs: number): Promise<number> {
  const started = Date.now();
  while (!(await check())) {
    if (Date.now() - started > timeoutMs) throw new Error(`condition not reached within ${timeoutMs} ms`);
    await sleep(50);
  }
  return Date.now() - started;
}

interface Answer {
  kind: 'register' | 'login' | 'session';
  email: string;
  status: number;
  startedAt: number;
  endedAt: number;
  text: string;
  retryAfter: string | null;
}

/** Sends one request and records what came back and when. */
async function timed(kind: Answer['kind'], email: string, send: () => Promise<Response>): Promise<Answer & { response: Response }> {
  const startedAt = Date.now();
  const response = await send();
  const text = await response.text();
  return { kind, email, status: response.status, startedAt, endedAt: Date.now(), text, retryAfter: response.headers.get('retry-after'), response };
}

/** A 503 as DESIGN §4 fixes it: JSON error shape, Retry-After, nothing internal. */
function expectCleanUnavailable(answer: Pick<Answer, 'status' | 'text' | 'retryAfter' | 'kind' | 'email'>): void {
  const where = `${answer.kind} ${answer.email}: ${answer.text}`;
  expect(answer.status, where).toBe(503);
  const body = JSON.parse(answer.text) as Record<string, unknown>;
  expect(body.error, where).toBe('service_unavailable');
  expect(typeof body.message, where).toBe('string');
  expect(Number(answer.retryAfter), where).toBeGreaterThan(0);
  expect(answer.text, where).not.toMatch(INTERNALS);
}

describe.skipIf(postgresUrl === null)('PostgreSQL outage mid-run', () => {
  const relay = TcpRelay.to(postgresUrl ?? 'postgres://127.0.0.1:5432', 5432);
  let g: TestGatehouse;

  beforeAll(async () => {
    await relay.open();
    g = await createTestGatehouse('postgres', { env: NO_LIMITS, connectVia: relay.urlFor(postgresUrl!) });
  });
  afterAll(async () => {
    await relay.open();
    await g?.close();
    await relay.cut();
  });

  const register = (email: string, ip: string) =>
    timed('register', email, () => g.request('POST', '/api/auth/register', { json: { email, password: STRONG_PASSWORD }, ip }));
  const login = (email: string, ip: string) =>
    timed('login', email, () => g.request('POST', '/api/auth/login', { json: { email, password: STRONG_PASSWORD }, ip }));

  test('cut: every answer is a clean 503 within 5 s and /readyz is 503; restored: full recovery, no half-written user', async () => {
    const answers: Answer[] = [];
    let stop = false;
    let counter = 0;
    // Clients that register, check their session and log in, over and over.
    const worker = async (w: number): Promise<void> => {
      while (!stop) {
        const email = `pg-${w}-${counter++}@example.com`;
        const ip = `198.51.100.${w + 1}`;
        const registered = await register(email, ip);
        answers.push(registered);
        if (registered.status !== 201) continue;
        const cookie = registered.response.headers.getSetCookie()[0]!.split(';')[0]!;
        answers.push(await timed('session', email, () => g.request('GET', '/api/auth/session', { cookie, ip })));
        answers.push(await login(email, ip));
      }
    };
    const workers = Array.from({ length: 6 }, (_, w) => worker(w));

    // Cut once traffic flows (a fixed wait is too short on a loaded machine).
    await waitFor(async () => answers.some((answer) => answer.status === 201 && answer.kind === 'register'), 20_000);
    await sleep(200);
    await relay.cut();
    const cutAt = Date.now();
    await sleep(1500);
    const readyDuringOutage = await timed('session', '/readyz', () => g.request('GET', '/readyz'));
    const readinessDuringOutage = await g.gatehouse.readiness();
    const restoredAt = Date.now();
    await relay.open();
    const recoveryMs = await waitFor(async () => (await g.request('GET', '/readyz')).status === 200, 10_000);
    const recoveredAt = Date.now();
    await sleep(700);
    stop = true;
    await Promise.all(workers);

    expect(readyDuringOutage.status).toBe(503);
    expect(JSON.parse(readyDuringOutage.text)).toEqual({ status: 'unavailable' });
    expect(readinessDuringOutage).toMatchObject({ status: 'unavailable', database: 'unreachable' });
    expect(readyDuringOutage.endedAt - readyDuringOutage.startedAt).toBeLessThan(MAX_ANSWER_MS);

    // Never a 500, never a hang; every refusal is the documented 503.
    for (const answer of answers) {
      expect([200, 201, 503], `${answer.kind} ${answer.email}: ${answer.text}`).toContain(answer.status);
      expect(answer.endedAt - answer.startedAt, `${answer.kind} ${answer.email}`).toBeLessThanOrEqual(MAX_ANSWER_MS);
      if (answer.status === 503) expectCleanUnavailable(answer);
    }
    const before = answers.filter((a) => a.endedAt < cutAt);
    const during = answers.filter((a) => a.startedAt > cutAt && a.endedAt < restoredAt);
    const after = answers.filter((a) => a.startedAt > recoveredAt);
    expect(before.filter((a) => a.status === 201).length).toBeGreaterThan(0);
    expect(during.length).toBeGreaterThan(10);
    expect(during.every((a) => a.status === 503)).toBe(true);
    // Once /readyz says ready, the pool hands out no dead connection: everything works.
    expect(after.filter((a) => a.kind === 'register').length).toBeGreaterThan(0);
    expect(after.filter((a) => a.status !== 200 && a.status !== 201).map((a) => `${a.kind} ${a.status} ${a.text}`)).toEqual([]);

    // Every 201 is a complete account that logs in; every 503 is no account or a complete one.
    const registrations = answers.filter((a) => a.kind === 'register');
    for (const r of registrations.filter((a) => a.status === 201)) {
      expect((await login(r.email, '203.0.113.99')).status, r.email).toBe(200);
    }
    const db = g.database.kysely;
    let refusedButComplete = 0;
    for (const r of registrations.filter((a) => a.status === 503)) {
      const user = await db.selectFrom('users').select('id').where('email', '=', r.email).executeTakeFirst();
      if (user === undefined) continue;
      refusedButComplete++;
      const token = await db.selectFrom('email_verification_tokens').select('id').where('user_id', '=', user.id).executeTakeFirst();
      const email = await db.selectFrom('email_outbox').select('id').where('recipient', '=', r.email).executeTakeFirst();
      expect(token, `verification token of ${r.email}`).toBeDefined();
      expect(email, `queued email of ${r.email}`).toBeDefined();
    }

    const duringMs = during.map((a) => a.endedAt - a.startedAt);
    console.info(
      `PostgreSQL outage: ${answers.length} answers (${during.length} during the cut, all 503, slowest ${Math.max(...duringMs)} ms); ` +
        `ready again ${recoveryMs} ms after restore; ${registrations.filter((a) => a.status === 201).length} registrations 201, ` +
        `${registrations.filter((a) => a.status === 503).length} answered 503 (${refusedButComplete} of them committed completely)`,
    );
    expect((await register('pg-after@example.com', '203.0.113.98')).status).toBe(201);
    expect((await login('pg-after@example.com', '203.0.113.98')).status).toBe(200);
  });
});

// limits-redis.test.ts already covers a cut Redis: the lock keeps counting in memory, /readyz
// goes degraded and back, one log line each way. Added here: the accounts' own answers (a correct
// password still gets in) with their latency, and a Redis that stalls instead of going away.
describe.skipIf(redisUrl === null)('Redis outage: logins keep answering', () => {
  const relay = TcpRelay.to(redisUrl ?? 'redis://127.0.0.1:6379', 6379);
  let g: TestGatehouse;
  beforeAll(async () => {
    await relay.open();
    g = await createTestGatehouse('sqlite', {
      env: { REDIS_URL: relay.urlFor(redisUrl!), REDIS_KEY_PREFIX: `gh-faults-${process.pid}-${Date.now()}` },
    });
  });
  afterAll(async () => {
    await g?.close();
    await relay.cut();
  });

  const readiness = () => g.gatehouse.readiness();

  test.each(['cut', 'stall'] as const)(
    'Redis %s: correct logins 200, wrong ones 401, registrations 201, each within 5 s; /readyz degraded, then ready',
    async (fault) => {
      const email = `redis-${fault}@example.com`;
      expect((await g.request('POST', '/api/auth/register', { json: { email, password: STRONG_PASSWORD }, ip: '192.0.2.1' })).status).toBe(201);
      expect(await readiness()).toMatchObject({ status: 'ready', limiter: 'redis' });

      if (fault === 'cut') await relay.cut();
      else relay.stall();
      const answers: Answer[] = [];
      for (let i = 0; i < 2; i++) {
        const ip = `192.0.2.${10 + i}`;
        answers.push(await timed('login', email, () => g.request('POST', '/api/auth/login', { json: { email, password: STRONG_PASSWORD }, ip })));
        answers.push(await timed('login', email, () => g.request('POST', '/api/auth/login', { json: { email, password: 'Wrong-Password-1' }, ip })));
        answers.push(
          await timed('register', `${fault}-${i}@example.com`, () =>
            g.request('POST', '/api/auth/register', { json: { email: `${fault}-${i}@example.com`, password: STRONG_PASSWORD }, ip }),
          ),
        );
      }
      expect(answers.map((a) => a.status)).toEqual([200, 401, 201, 200, 401, 201]);
      for (const a of answers) expect(a.endedAt - a.startedAt, `${a.kind} ${a.email}`).toBeLessThanOrEqual(MAX_ANSWER_MS);
      const degraded = await g.request('GET', '/readyz');
      expect(degraded.status).toBe(200);
      expect(await degraded.json()).toEqual({ status: 'degraded' });
      expect(await readiness()).toEqual({ status: 'degraded', database: 'ok', limiter: 'memory-fallback' });

      if (fault === 'cut') await relay.open();
      else await relay.unstall();
      const recoveryMs = await waitFor(async () => (await readiness()).status === 'ready', 8000);
      console.info(
        `Redis ${fault}: logins/registrations answered in ${Math.min(...answers.map((a) => a.endedAt - a.startedAt))}–` +
          `${Math.max(...answers.map((a) => a.endedAt - a.startedAt))} ms; /readyz ready again ${recoveryMs} ms after restore`,
      );
    },
  );
});

describe('SIGTERM under load', () => {
  const dirs: string[] = [];
  const servers: ServerProcess[] = [];
  afterEach(async () => {
    for (const server of servers.splice(0)) {
      try {
        process.kill(server.pid, 'SIGKILL');
      } catch {
        // already exited
      }
    }
    for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
  });

  test('in-flight registrations finish (201) or get a clean 503 or a refused connection, never a 500; exit 0; every 201 logs in after restart', async () => {
    const cwd = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-sigterm-'));
    dirs.push(cwd);
    const env = {
      DATABASE_URL: `sqlite:${path.join(cwd, 'gatehouse.db')}`,
      JWT_SECRET: 'sigterm-test-jwt-secret-that-is-long-enough-0123',
      BCRYPT_ROUNDS: '8',
      ...NO_LIMITS,
    };
    const first = await startServerProcess({ env, cwd });
    servers.push(first);

    type Outcome = { email: string; status?: number; text?: string; errorCode?: string };
    const send = async (email: string): Promise<Outcome> => {
      try {
        const response = await fetch(`${first.url}/api/auth/register`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ email, password: STRONG_PASSWORD }),
          signal: AbortSignal.timeout(15_000),
        });
        return { email, status: response.status, text: await response.text() };
      } catch (error) {
        const cause = (error as { cause?: { code?: string } }).cause;
        return { email, errorCode: cause?.code ?? (error as Error).name };
      }
    };
    let firstAnswered!: () => void;
    const answered = new Promise<void>((resolve) => (firstAnswered = resolve));
    const wave = Array.from({ length: 40 }, (_, i) => send(`load-${i}@example.com`).finally(() => firstAnswered()));
    // SIGTERM while most of the wave is still hashing; a second wave arrives during the drain.
    await answered;
    const signalledAt = Date.now();
    process.kill(first.pid, 'SIGTERM');
    const { port } = new URL(first.url);
    await waitFor(async () => !(await accepts(Number(port))), 5000);
    const late = await Promise.all(Array.from({ length: 10 }, (_, i) => send(`late-${i}@example.com`)));
    const outcomes = [...(await Promise.all(wave)), ...late];
    const exitCode = await Promise.race([first.exited, sleep(12_000).then(() => 'still running' as const)]);
    const exitMs = Date.now() - signalledAt;

    expect(exitCode, first.output()).toBe(0);
    expect(exitMs).toBeLessThan(10_000); // the shutdown grace period (src/server.ts)
    // Drained keep-alive connections are closed with their last answer; waiting for them to
    // time out instead took over 4 s.
    expect(exitMs).toBeLessThan(3500);
    const created = outcomes.filter((o) => o.status === 201);
    const refused = outcomes.filter((o) => o.status === 503);
    const failed = outcomes.filter((o) => o.errorCode !== undefined);
    for (const o of refused) expectCleanUnavailable({ status: 503, text: o.text!, retryAfter: '1', kind: 'register', email: o.email });
    for (const o of outcomes) {
      if (o.status !== undefined) expect([201, 503], `${o.email}: ${o.text}`).toContain(o.status);
      // Only what a closed listener causes: the connection is refused or cut before an answer.
      else expect(['ECONNREFUSED', 'ECONNRESET', 'UND_ERR_SOCKET', 'EPIPE'], o.email).toContain(o.errorCode);
    }
    expect(created.length).toBeGreaterThan(1);
    // Once the listener is closed, nothing new gets in.
    expect(late.filter((o) => o.status === 201)).toEqual([]);
    expect(first.output()).not.toMatch(/unhandled error|"level":50/);

    const second = await startServerProcess({ env, cwd });
    servers.push(second);
    for (const o of created) {
      const login = await fetch(`${second.url}/api/auth/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email: o.email, password: STRONG_PASSWORD }),
      });
      expect(login.status, o.email).toBe(200);
    }
    await second.stop();
    console.info(
      `SIGTERM under load: ${created.length} × 201, ${refused.length} × 503, ${failed.length} refused/reset ` +
        `(${[...new Set(failed.map((o) => o.errorCode))].join(', ') || 'none'}); exit 0 after ${exitMs} ms`,
    );
  });
});

/** Mounts a tmpfs of `sizeMb` on a fresh directory; null (with the reason) where not allowed. */
function mountTinyDisk(sizeMb: number): { dir: string } | { error: string } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-disk-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${sizeMb}m`, 'tmpfs', dir], { stdio: 'pipe' });
    return { dir };
  } catch (error) {
    fs.rmSync(dir, { recursive: true, force: true });
    return { error: String((error as { stderr?: Buffer }).stderr ?? error).trim() };
  }
}

function unmount(dir: string): void {
  try {
    execFileSync('umount', [dir], { stdio: 'pipe' });
  } catch {
    // Still busy (a test failed before closing its database): detach it now, freed on close.
    execFileSync('umount', ['-l', dir], { stdio: 'pipe' });
  }
  fs.rmSync(dir, { recursive: true, force: true });
}

const probe = mountTinyDisk(1);
if ('dir' in probe) unmount(probe.dir);
else console.warn(`Disk fault tests skipped: mounting a tmpfs is not allowed here (${probe.error}). They need root.`);

describe.skipIf(!('dir' in probe))('SQLite on a full or read-only disk', () => {
  const mounts: string[] = [];
  const open: TestGatehouse[] = [];
  afterEach(async () => {
    for (const g of open.splice(0)) await g.close();
    for (const dir of mounts.splice(0)) unmount(dir);
  });

  const tinyDisk = (): string => {
    const mounted = mountTinyDisk(2);
    if (!('dir' in mounted)) throw new Error(mounted.error);
    mounts.push(mounted.dir);
    return mounted.dir;
  };
  const start = async (filename: string): Promise<TestGatehouse> => {
    const g = await createTestGatehouse('sqlite', { env: NO_LIMITS, overrides: { database: openDatabase({ kind: 'sqlite', filename }) } });
    open.push(g);
    return g;
  };
  const register = (g: TestGatehouse, email: string) =>
    timed('register', email, () => g.request('POST', '/api/auth/register', { json: { email, password: STRONG_PASSWORD } }));
  const login = (g: TestGatehouse, email: string) =>
    timed('login', email, () => g.request('POST', '/api/auth/login', { json: { email, password: STRONG_PASSWORD } }));

  /** Writes junk until the disk refuses another byte. */
  const fillDisk = (dir: string): string => {
    const junk = path.join(dir, 'junk');
    const fd = fs.openSync(junk, 'w');
    try {
      for (const size of [256 * 1024, 4096, 1]) {
        const chunk = Buffer.alloc(size, 0x61);
        for (;;) fs.writeSync(fd, chunk);
      }
    } catch (error) {
      if ((error as { code?: string }).code !== 'ENOSPC') throw error;
      // The larger chunks stop first; keep filling with smaller ones.
      for (const size of [4096, 1]) {
        try {
          for (;;) fs.writeSync(fd, Buffer.alloc(size, 0x61));
        } catch (inner) {
          if ((inner as { code?: string }).code !== 'ENOSPC') throw inner;
        }
      }
    } finally {
      fs.closeSync(fd);
    }
    return junk;
  };

  test('disk full: registrations answer 503 (never 500) and reads still work; space freed: it works again and the file is intact', async () => {
    const dir = tinyDisk();
    const g = await start(path.join(dir, 'gatehouse.db'));
    const before = await register(g, 'before-full@example.com');
    expect(before.status).toBe(201);
    const cookie = before.response.headers.getSetCookie()[0]!.split(';')[0]!;
    const junk = fillDisk(dir);

    const answers: Answer[] = [];
    for (let i = 0; i < 30; i++) answers.push(await register(g, `full-${i}@example.com`));
    for (const answer of answers) {
      expect([201, 503], answer.text).toContain(answer.status);
      if (answer.status === 503) expectCleanUnavailable(answer);
    }
    const refused = answers.filter((a) => a.status === 503);
    expect(refused.length).toBeGreaterThan(0);
    // Session checks only read: a full disk does not sign anyone out.
    expect((await g.request('GET', '/api/auth/session', { cookie })).status).toBe(200);
    const loginWhileFull = await login(g, 'before-full@example.com');
    expect([200, 503], loginWhileFull.text).toContain(loginWhileFull.status);

    fs.rmSync(junk);
    expect((await register(g, 'after-full@example.com')).status).toBe(201);
    expect((await login(g, 'after-full@example.com')).status).toBe(200);
    for (const a of answers.filter((x) => x.status === 201)) expect((await login(g, a.email)).status, a.email).toBe(200);
    const db = g.database.kysely;
    for (const a of refused) {
      const user = await db.selectFrom('users').select('id').where('email', '=', a.email).executeTakeFirst();
      if (user === undefined) continue;
      expect(await db.selectFrom('email_verification_tokens').select('id').where('user_id', '=', user.id).executeTakeFirst()).toBeDefined();
      expect(await db.selectFrom('email_outbox').select('id').where('recipient', '=', a.email).executeTakeFirst()).toBeDefined();
    }
    const { rows } = await sql<{ integrity_check: string }>`pragma integrity_check`.execute(db);
    expect(rows).toEqual([{ integrity_check: 'ok' }]);
    console.info(
      `Disk full: ${refused.length} of ${answers.length} registrations answered 503 (slowest ${Math.max(...answers.map((a) => a.endedAt - a.startedAt))} ms); ` +
        `login while full: ${loginWhileFull.status}; after freeing space: 201, integrity_check ok`,
    );
  });

  // A running instance cannot be put on a read-only disk here: the kernel refuses to remount
  // read-only a filesystem with files open for writing (EBUSY), and SQLite keeps its database
  // open read-write. What can happen is a start on a read-only location, after a restore or a
  // misconfigured volume.
  test('read-only disk: the server and the migrate command refuse to start with a message naming the database, exit 1, no stack trace', async () => {
    const dir = tinyDisk();
    const filename = path.join(dir, 'gatehouse.db');
    const g = await start(filename);
    expect((await register(g, 'before-ro@example.com')).status).toBe(201);
    await open.splice(0)[0]!.close();
    execFileSync('mount', ['-o', 'remount,ro', dir], { stdio: 'pipe' });

    expect(() => openDatabase({ kind: 'sqlite', filename })).toThrow(
      expect.objectContaining({ code: 'SQLITE_CANTOPEN', message: expect.stringContaining(filename) }),
    );
    for (const [command, target] of [
      ['serve', filename],
      ['serve', path.join(dir, 'fresh.db')],
      ['migrate', filename],
    ] as const) {
      const started = Date.now();
      const result = await runCli([command], {
        DATABASE_URL: `sqlite:${target}`,
        JWT_SECRET: 'read-only-test-jwt-secret-that-is-long-enough-01',
        // Secrets given, so only the database can fail (a generated key could not be kept either).
        ENCRYPTION_KEY_BASE64: Buffer.alloc(32, 7).toString('base64'),
      });
      const where = `${command} ${target}: ${result.output}`;
      expect(result.code, where).toBe(1);
      expect(result.output, where).toMatch(/^Gatehouse cannot start: cannot open the SQLite database /);
      expect(result.output, where).toContain(target);
      expect(result.output, where).not.toMatch(/\n\s+at /);
      expect(Date.now() - started).toBeLessThan(MAX_ANSWER_MS);
    }
  });
});

/** Runs the built CLI to its end. */
function runCli(args: string[], env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  const child = spawn(process.execPath, [path.resolve('dist/cli.js'), ...args], {
    cwd: os.tmpdir(),
    env: { PATH: process.env.PATH ?? '', PORT: '0', LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
  return new Promise((resolve) =>
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    }),
  );
}
