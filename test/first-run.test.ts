/**
 * A first start as a person does it (issue 21): the built CLI in a child process, in a
 * pseudo-terminal (util-linux `script`) and in a pipe, under umask 022, in a fresh working
 * directory. What it prints (readable lines on a terminal, JSON otherwise, the start banner),
 * the modes of the files it creates, the `.env` it reads, and that no secret reaches its output.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Kysely, PostgresDialect, sql } from 'kysely';
import pg from 'pg';
import { afterEach, describe, expect, test } from 'vitest';
import { postgresUrl } from './support/services.js';

const CLI = path.resolve('dist/cli.js');
/** The pattern bench/lib.mjs and test/support/server-process.ts wait for. */
const LISTENING = /listening on (http:\/\/[^\s"]+)/;
const ANSI = new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*m`, 'g');

const hasScript = spawnSync('script', ['--version']).status === 0;
if (!hasScript) console.warn('first-run terminal tests skipped: util-linux `script` is not installed (apt-get install bsdutils).');

const children: ChildProcess[] = [];
const dirs: string[] = [];
const cleanups: Array<() => Promise<void>> = [];

afterEach(async () => {
  for (const child of children.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

function tempDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-first-run-'));
  dirs.push(dir);
  return dir;
}

/**
 * A preloaded script that, as the process exits, says whether pino-pretty was ever loaded.
 * Every module loaded through require (pino-pretty is, lazily) stays in require.cache.
 */
function observer(dir: string): string {
  const file = path.join(dir, 'observer.cjs');
  fs.writeFileSync(
    file,
    `process.on('exit', () => {
       const loaded = Object.keys(require.cache).some((name) => name.includes('${path.sep}pino-pretty${path.sep}'));
       require('node:fs').writeSync(2, '\\n[observer] pino-pretty loaded: ' + loaded + '\\n');
     });\n`,
  );
  return file;
}

const shellWord = (text: string): string => `'${text.replace(/'/g, `'\\''`)}'`;

interface Run {
  output(): string;
  /** The output without colour codes and carriage returns. */
  text(): string;
  waitFor(pattern: RegExp): Promise<RegExpExecArray>;
  /** Ctrl-C on a terminal, SIGTERM otherwise; resolves with the exit code. */
  stop(): Promise<number | null>;
  exited: Promise<number | null>;
}

/**
 * `gatehouse <command>` under umask 022, with only the variables given (and PATH, PORT=0,
 * LOG_LEVEL=info), in a terminal or with its output piped.
 */
function start(options: { cwd: string; env?: Record<string, string>; terminal: boolean; preload?: string; command?: string }): Run {
  const node = [process.execPath, ...(options.preload ? ['--require', options.preload] : []), CLI, options.command ?? 'serve'];
  const shell = `umask 022 && exec ${node.map(shellWord).join(' ')}`;
  const env = { PATH: process.env.PATH ?? '', PORT: '0', LOG_LEVEL: 'info', ...options.env };
  const child = options.terminal
    ? spawn('script', ['-qc', shell, '/dev/null'], { cwd: options.cwd, env, stdio: ['pipe', 'pipe', 'pipe'] })
    : spawn('/bin/sh', ['-c', shell], { cwd: options.cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  let output = '';
  const listeners = new Set<() => void>();
  const onData = (chunk: Buffer): void => {
    output += chunk.toString();
    for (const listener of listeners) listener();
  };
  child.stdout?.on('data', onData);
  child.stderr?.on('data', onData);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  // A terminal echoes the Ctrl-C that stops the server as ^C.
  const text = (): string => output.replace(ANSI, '').replace(/\r/g, '').replace(/\^C/g, '');
  return {
    output: () => output,
    text,
    exited,
    waitFor: (pattern) =>
      new Promise((resolve, reject) => {
        const check = (): void => {
          const match = pattern.exec(text());
          if (match) {
            listeners.delete(check);
            resolve(match);
          }
        };
        listeners.add(check);
        check();
        void exited.then(() => {
          check();
          if (listeners.has(check)) reject(new Error(`exited before printing ${pattern}:\n${output}`));
        });
      }),
    stop: () => {
      if (options.terminal) child.stdin?.write('\x03');
      else child.kill('SIGTERM');
      return exited;
    },
  };
}

/** The bound address from the raw output, colour codes included, exactly as the bench reads it. */
function listeningUrl(run: Run): string {
  const match = LISTENING.exec(run.output());
  if (!match?.[1]) throw new Error(`no listening line:\n${run.output()}`);
  return match[1];
}

interface LogRecord {
  level: number;
  msg: string;
  start?: Record<string, unknown>;
  [field: string]: unknown;
}

/** Every JSON log line; fails the test on a line that is neither JSON nor the observer's. */
function jsonRecords(run: Run): LogRecord[] {
  return run
    .text()
    .split('\n')
    .filter((line) => line.trim() !== '' && !line.startsWith('[observer]'))
    .map((line) => {
      expect(line, 'every line is a JSON log record').toMatch(/^\{"level":/);
      return JSON.parse(line) as LogRecord;
    });
}

const modeOf = (file: string): number => fs.statSync(file).mode & 0o777;

describe.skipIf(!hasScript)('what a person sees in a terminal', () => {
  test('readable lines, a banner with the next step and one line per capability that is off; Ctrl-C stops it', async () => {
    const cwd = tempDir();
    const run = start({ cwd, terminal: true, preload: observer(cwd) });
    await run.waitFor(/Email delivery is off/);
    const text = run.text();

    expect(text).not.toMatch(/\{"level"/);
    expect(text).toMatch(/\d\d:\d\d:\d\d\.\d{3}\] INFO: Gatehouse listening on http:\/\/127\.0\.0\.1:\d+ \(mode: default, database: sqlite\)/);
    expect(text).toMatch(/WARN: JWT_SECRET is not set: generated a secret/);
    // PORT=0 without BASE_URL: the links name the port actually bound.
    const base = `http://localhost:${new URL(listeningUrl(run)).port}`;
    expect(text).toContain(`Open ${base} in a browser: ${base}/register to create an account, ${base}/login to sign in`);
    expect(text).toContain(`Database: SQLite file ${path.join(cwd, 'data', 'gatehouse.db')}. Data folder: ${path.join(cwd, 'data')}`);
    expect(text).toMatch(/INFO: Sign in with GitHub is off: set GITHUB_CLIENT_ID, GITHUB_CLIENT_SECRET, AUTH_SECRET, ENCRYPTION_KEY_BASE64 to turn it on/);
    expect(text.match(/GITHUB_CLIENT_ID/g)).toHaveLength(1);
    expect(text).not.toMatch(/Sign in with GitHub is disabled/);
    expect(text).toMatch(/INFO: Email delivery is off: emails are printed to this console instead; set SMTP_URL to send them/);
    // The start details are in the message; the pretty lines leave out the fields that repeat it.
    expect(text).not.toMatch(/startupMs|pid:|hostname:/);

    // The address the bench and the tests read from a coloured line is the one that answers.
    expect((await fetch(`${listeningUrl(run)}/healthz`)).status).toBe(200);

    expect(await run.stop()).toBe(0);
    expect(run.text()).toMatch(/INFO: shutting down: finishing in-flight requests\n {4}signal: "SIGINT"\n[^\n]*INFO: stopped\n/);
    expect(run.text()).toContain('[observer] pino-pretty loaded: true');
  });

  test('LOG_FORMAT=json in a terminal prints JSON', async () => {
    const cwd = tempDir();
    const run = start({ cwd, terminal: true, env: { LOG_FORMAT: 'json', JWT_SECRET: 'j'.repeat(40) }, preload: observer(cwd) });
    await run.waitFor(/"msg":"Email delivery is off/);
    expect(await run.stop()).toBe(0);
    const records = jsonRecords(run);
    expect(records.find((record) => LISTENING.test(record.msg))?.start).toMatchObject({ mode: 'default', database: 'sqlite' });
    expect(run.text()).toContain('[observer] pino-pretty loaded: false');
  });
});

describe('what a log collector sees', () => {
  test('with its output piped, every line is JSON, the banner carries its facts as fields, and pino-pretty is never loaded', async () => {
    const cwd = tempDir();
    const run = start({ cwd, terminal: false, preload: observer(cwd) });
    await run.waitFor(/"msg":"Email delivery is off/);
    expect((await fetch(`${listeningUrl(run)}/healthz`)).status).toBe(200);
    expect(await run.stop()).toBe(0);

    const records = jsonRecords(run);
    const listening = records.find((record) => LISTENING.test(record.msg));
    expect(listening?.level).toBe(30);
    const baseUrl = `http://localhost:${new URL(listeningUrl(run)).port}`;
    expect(listening?.start).toMatchObject({ url: listeningUrl(run), baseUrl, mode: 'default', database: 'sqlite' });
    expect(typeof listening?.start?.startupMs).toBe('number');
    const github = records.filter((record) => record.msg.includes('GITHUB_CLIENT_ID'));
    expect(github).toHaveLength(1);
    expect(github[0]).toMatchObject({ level: 30, start: { capability: 'github', state: 'off' } });
    expect(records.find((record) => record.msg.startsWith('Database:'))?.start).toEqual({
      database: 'sqlite',
      dataDir: path.join(cwd, 'data'),
      file: path.join(cwd, 'data', 'gatehouse.db'),
    });
    expect(records.some((record) => record.level >= 40 && /GitHub/.test(record.msg))).toBe(false);
    expect(run.text()).toContain('[observer] pino-pretty loaded: false');
  });

  test('LOG_FORMAT=pretty in a pipe prints readable lines without colour codes', async () => {
    const run = start({ cwd: tempDir(), terminal: false, env: { LOG_FORMAT: 'pretty', JWT_SECRET: 'j'.repeat(40) } });
    await run.waitFor(/INFO: Email delivery is off/);
    expect(await run.stop()).toBe(0);
    expect(run.output()).not.toContain(String.fromCharCode(27));
    expect(run.output()).not.toMatch(/\{"level"/);
    expect(run.output()).toMatch(/INFO: Gatehouse listening on http:\/\/127\.0\.0\.1:\d+ /);
  });

  test('a LOG_FORMAT that is neither json nor pretty stops the start naming the variable, without a stack trace', async () => {
    const run = start({ cwd: tempDir(), terminal: false, env: { LOG_FORMAT: 'yaml' } });
    expect(await run.exited).toBe(1);
    expect(run.text()).toMatch(/Gatehouse cannot start\.\nInvalid configuration:\n {2}- LOG_FORMAT: expected json or pretty .*got "yaml"/);
    expect(run.text()).not.toMatch(/\n\s+at /);
  });
});

describe('a data folder only its owner can read', () => {
  test('the first start under umask 022: the folder is 0700, the database, its WAL and SHM files and jwt-secret 0600', async () => {
    const cwd = tempDir();
    fs.chmodSync(cwd, 0o755);
    const run = start({ cwd, terminal: false, env: { BCRYPT_ROUNDS: '4' } });
    await run.waitFor(LISTENING);
    // A write, so the WAL holds data (the WAL and SHM files exist while the database is open).
    const register = await fetch(`${listeningUrl(run)}/api/auth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'modes@example.com', password: 'Correct-Horse-9' }),
    });
    expect(register.status).toBe(201);
    const data = path.join(cwd, 'data');
    expect(modeOf(data).toString(8)).toBe('700');
    for (const name of ['gatehouse.db', 'gatehouse.db-wal', 'gatehouse.db-shm', 'jwt-secret']) {
      expect(modeOf(path.join(data, name)).toString(8), name).toBe('600');
    }
    expect(await run.stop()).toBe(0);
    expect(modeOf(path.join(data, 'gatehouse.db')).toString(8)).toBe('600');
    // The working directory existed already: it keeps its mode.
    expect(modeOf(cwd).toString(8)).toBe('755');
    expect(run.text()).not.toMatch(/Other users on this machine/);
  });

  test('every folder created on the way to the database is 0700; gatehouse migrate creates the same private file', async () => {
    const cwd = tempDir();
    const run = start({ cwd, terminal: false, command: 'migrate', env: { DATABASE_URL: 'sqlite:./deep/er/auth.db' } });
    expect(await run.exited).toBe(0);
    expect(modeOf(path.join(cwd, 'deep')).toString(8)).toBe('700');
    expect(modeOf(path.join(cwd, 'deep', 'er')).toString(8)).toBe('700');
    expect(modeOf(path.join(cwd, 'deep', 'er', 'auth.db')).toString(8)).toBe('600');
  });

  test('an existing database open to others gets a warning naming it and the chmod that fixes it; a jwt-secret open to others is closed', async () => {
    const cwd = tempDir();
    const first = start({ cwd, terminal: false });
    await first.waitFor(LISTENING);
    expect(await first.stop()).toBe(0);
    const database = path.join(cwd, 'data', 'gatehouse.db');
    const secret = path.join(cwd, 'data', 'jwt-secret');
    fs.chmodSync(database, 0o644);
    fs.chmodSync(secret, 0o644);
    const secretBefore = fs.readFileSync(secret, 'utf8');

    const second = start({ cwd, terminal: false });
    await second.waitFor(/"msg":"Email delivery is off/);
    const records = jsonRecords(second);
    const warning = records.find((record) => record.msg.startsWith('Other users on this machine'));
    expect(warning?.level).toBe(40);
    expect(warning?.msg).toContain(`${database} (mode 0644)`);
    expect(warning?.msg).toContain(`To fix: chmod 600 ${database}`);
    // The operator's database is not changed behind their back; the secret, Gatehouse's own, is.
    expect(modeOf(database).toString(8)).toBe('644');
    expect(modeOf(secret).toString(8)).toBe('600');
    expect(fs.readFileSync(secret, 'utf8')).toBe(secretBefore);
    const secretWarning = records.find((record) => record.msg.startsWith(`${secret} could be read by other users (mode 0644); changed it to 0600`));
    expect(secretWarning?.level).toBe(40);
    expect(await second.stop()).toBe(0);

    fs.chmodSync(database, 0o600);
    const third = start({ cwd, terminal: false });
    await third.waitFor(/"msg":"Email delivery is off/);
    expect(await third.stop()).toBe(0);
    expect(third.text()).not.toMatch(/Other users on this machine|could be read by other users/);
  });
});

describe('settings in a .env file', () => {
  const baseUrlOf = (run: Run): unknown => jsonRecords(run).find((record) => LISTENING.test(record.msg))?.start?.baseUrl;

  test('./.env is read at start, and a variable exported in the environment wins over it', async () => {
    const cwd = tempDir();
    fs.writeFileSync(path.join(cwd, '.env'), '# settings\nBASE_URL=http://from-dotenv.example:8080\nAPP_NAME="Dot Env"\nPROT=3000\n');

    const fromFile = start({ cwd, terminal: false });
    await fromFile.waitFor(/"msg":"Email delivery is off/);
    expect(await fromFile.stop()).toBe(0);
    expect(baseUrlOf(fromFile)).toBe('http://from-dotenv.example:8080');
    const read = jsonRecords(fromFile).find((record) => record.msg.startsWith('Read settings from'));
    expect(read?.msg).toBe(`Read settings from ${path.join(cwd, '.env')}: APP_NAME, BASE_URL, PROT; not Gatehouse variables: PROT`);

    const exported = start({ cwd, terminal: false, env: { BASE_URL: 'http://exported.example:9090' } });
    await exported.waitFor(/"msg":"Email delivery is off/);
    expect(await exported.stop()).toBe(0);
    expect(baseUrlOf(exported)).toBe('http://exported.example:9090');
    expect(jsonRecords(exported).find((record) => record.msg.startsWith('Read settings from'))?.start).toMatchObject({
      set: ['APP_NAME', 'PROT'],
      kept: ['BASE_URL'],
    });
  });

  test.skipIf(!hasScript)('in a terminal, the line saying which file was read is readable too', async () => {
    const cwd = tempDir();
    fs.writeFileSync(path.join(cwd, '.env'), 'JWT_SECRET=dotenv-secret-value-that-is-long-enough-123\n');
    const run = start({ cwd, terminal: true });
    await run.waitFor(/Email delivery is off/);
    expect(await run.stop()).toBe(0);
    expect(run.text()).toContain(`INFO: Read settings from ${path.join(cwd, '.env')}: JWT_SECRET`);
    expect(run.text()).not.toContain('dotenv-secret-value');
    expect(run.text()).not.toMatch(/JWT_SECRET is not set/);
  });

  test('production does not read ./.env unless ENV_FILE names it', async () => {
    const cwd = tempDir();
    fs.writeFileSync(path.join(cwd, '.env'), 'BASE_URL=http://from-dotenv.example:8080\n');
    fs.writeFileSync(path.join(cwd, 'prod.env'), 'BASE_URL=https://auth.example.com\n');
    // Plain http allowed explicitly: which BASE_URL wins is what this test reads.
    const production = {
      NODE_ENV: 'production',
      ALLOW_INSECURE_BASE_URL: 'true',
      METRICS_PUBLIC: 'true',
      JWT_SECRET: 'p'.repeat(40),
      DATABASE_URL: 'sqlite:./prod.db',
    };

    const ignored = start({ cwd, terminal: false, env: production });
    await ignored.waitFor(LISTENING);
    expect(await ignored.stop()).toBe(0);
    expect(baseUrlOf(ignored)).toBe(`http://localhost:${new URL(listeningUrl(ignored)).port}`);
    expect(jsonRecords(ignored).find((record) => record.msg.startsWith('Not reading'))?.msg).toBe(
      `Not reading ${path.join(cwd, '.env')}: in production a settings file is read only when ENV_FILE names it`,
    );

    const named = start({ cwd, terminal: false, env: { ...production, ENV_FILE: '.env' } });
    await named.waitFor(LISTENING);
    expect(await named.stop()).toBe(0);
    expect(baseUrlOf(named)).toBe('http://from-dotenv.example:8080');

    // ENV_FILE names the file to read instead of ./.env, in any mode.
    const other = start({ cwd, terminal: false, env: { JWT_SECRET: 'p'.repeat(40), ENV_FILE: 'prod.env' } });
    await other.waitFor(LISTENING);
    expect(await other.stop()).toBe(0);
    expect(baseUrlOf(other)).toBe('https://auth.example.com');
  });

  test('an ENV_FILE that does not exist stops the start naming ENV_FILE, without a stack trace', async () => {
    const cwd = tempDir();
    const run = start({ cwd, terminal: false, env: { ENV_FILE: 'missing.env' } });
    expect(await run.exited).toBe(1);
    expect(run.text()).toContain(`Gatehouse cannot start.\nInvalid configuration:\n  - ENV_FILE: no file at ${path.join(cwd, 'missing.env')}`);
    expect(run.text()).not.toMatch(/\n\s+at /);
  });
});

describe('secrets never reach the start lines', () => {
  /** A PostgreSQL URL with a password in it, onto a throwaway schema; null without PostgreSQL. */
  async function postgresWithPassword(password: string): Promise<string | null> {
    if (postgresUrl === null) return null;
    const schema = `gh_test_${randomBytes(6).toString('hex')}`;
    const admin = new Kysely<unknown>({ dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: postgresUrl, max: 1 }) }) });
    await sql`create schema ${sql.id(schema)}`.execute(admin);
    cleanups.push(async () => {
      await sql`drop schema ${sql.id(schema)} cascade`.execute(admin);
      await admin.destroy();
    });
    const url = new URL(postgresUrl);
    // The team's PostgreSQL trusts loopback and ignores a password; one already in the URL is kept.
    if (url.password === '') url.password = password;
    url.searchParams.set('options', `-c search_path=${schema}`);
    return url.toString();
  }

  for (const terminal of hasScript ? [false, true] : [false]) {
    test(`${terminal ? 'in a terminal' : 'piped'}: no secret variable, SMTP password or database password is printed`, async () => {
      const marker = randomBytes(6).toString('hex');
      const secrets = {
        JWT_SECRET: `jwt-${marker}-${'x'.repeat(32)}`,
        SMTP_URL: `smtp://mailer:smtp-${marker}@127.0.0.1:2525`,
        GITHUB_CLIENT_ID: 'gh-client-id',
        GITHUB_CLIENT_SECRET: `ghsecret-${marker}`,
        AUTH_SECRET: `auth-${marker}-0123456789`,
        ENCRYPTION_KEY_BASE64: randomBytes(32).toString('base64'),
      };
      const database = await postgresWithPassword(`pg-${marker}`);
      const run = start({ cwd: tempDir(), terminal, env: { ...secrets, ...(database ? { DATABASE_URL: database } : {}) } });
      await run.waitFor(/Email delivery is on/);
      expect(await run.stop()).toBe(0);
      const text = run.text();

      expect(text).toMatch(/Sign in with GitHub is on/);
      expect(text).toContain('Email delivery is on: over SMTP to 127.0.0.1:2525, by this server');
      if (database) {
        const { host, pathname, password } = new URL(database);
        expect(text).toContain(`Database: PostgreSQL at ${host}${pathname}.`);
        expect(text).not.toContain(password);
        expect(text).not.toContain('search_path');
      }
      for (const [name, value] of Object.entries(secrets)) {
        if (name === 'GITHUB_CLIENT_ID') continue;
        expect(text, name).not.toContain(name === 'SMTP_URL' ? `smtp-${marker}` : value);
      }
      expect(text).not.toContain(marker);
    });
  }
});
