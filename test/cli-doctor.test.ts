/**
 * `gatehouse doctor` and `gatehouse migrate`, and the start errors that name their variable: the
 * built CLI (`npm run build`) run as a process against broken environments (closed ports, a
 * port in use, missing secrets, a bad value in .env, a mail server whose certificate does not
 * verify) and a good one (a migrated PostgreSQL schema, Redis, a mail server with a verified
 * STARTTLS certificate).
 */
import { execFile, execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { SMTPServer } from 'smtp-server';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { freePort } from './support/free-port.js';
import { TEST_JWT_SECRET } from './support/harness.js';
import { postgresUrl, redisUrl } from './support/services.js';
import { startTestSMTPServer } from './support/smtp-server.js';
import { throwawaySchemaUrl } from './support/throwaway-schema.js';

const CLI = path.resolve('dist/cli.js');

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function run(args: string[], env: Record<string, string>, cwd: string): Promise<Run> {
  return new Promise((resolve) => {
    execFile(process.execPath, [CLI, ...args], { env: { PATH: process.env.PATH ?? '', ...env }, cwd, timeout: 60_000 }, (error, stdout, stderr) => {
      resolve({ code: error === null ? 0 : typeof error.code === 'number' ? error.code : -1, stdout, stderr });
    });
  });
}

/** The line of doctor's output about `subject`, with its level. */
function lineAbout(output: string, subject: string): string | undefined {
  return output.split('\n').find((line) => new RegExp(`^\\S+\\s+${subject}:`).test(line));
}

describe.skipIf(postgresUrl === null || redisUrl === null)('gatehouse doctor and migrate', { timeout: 120_000 }, () => {
  const cleanups: (() => Promise<void>)[] = [];
  let dir: string;
  let closedPort: number;
  let schemaUrl: string;

  beforeAll(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'gatehouse-doctor-'));
    cleanups.push(async () => rmSync(dir, { recursive: true, force: true }));
    closedPort = await freePort();
    schemaUrl = await throwawaySchemaUrl((cleanup) => cleanups.push(cleanup));
  });
  afterAll(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup();
  });

  test('migrate in production needs only DATABASE_URL; a closed port is named with its variable', async () => {
    const migrated = await run(['migrate'], { NODE_ENV: 'production', DATABASE_URL: schemaUrl }, dir);
    expect(migrated.stderr).toBe('');
    expect(migrated.code).toBe(0);
    expect(migrated.stdout).toMatch(/^applied: 001-users-sessions-audit$/m);
    expect((await run(['migrate'], { NODE_ENV: 'production', DATABASE_URL: schemaUrl }, dir)).stdout).toBe('Database is up to date.\n');

    const refused = await run(['migrate'], { NODE_ENV: 'production', DATABASE_URL: `postgres://postgres@127.0.0.1:${closedPort}/gatehouse` }, dir);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(`DATABASE_URL: cannot connect to 127.0.0.1:${closedPort} (ECONNREFUSED) — is PostgreSQL running`);
    expect(refused.stderr).not.toMatch(/\n\s+at /);
  });

  test('serve: a port in use names PORT; a bad value from .env names the file', async () => {
    const taken = net.createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const port = (taken.address() as net.AddressInfo).port;
    try {
      const inUse = await run(['serve'], { PORT: String(port), JWT_SECRET: TEST_JWT_SECRET, DATABASE_URL: 'sqlite::memory:', LOG_LEVEL: 'silent' }, dir);
      expect(inUse.code).toBe(1);
      expect(inUse.stderr).toContain(`PORT: ${port} is already in use on 127.0.0.1 (EADDRINUSE) — stop what listens there, or set PORT to a free port`);
    } finally {
      taken.close();
    }
    const envDir = path.join(dir, 'with-env');
    mkdirSync(envDir);
    writeFileSync(path.join(envDir, '.env'), 'PORT=eighty\n');
    const bad = await run(['serve'], { DATABASE_URL: 'sqlite::memory:' }, envDir);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain(`PORT: expected a whole number from 0 to 65535, got "eighty" (PORT is set in ${path.join(envDir, '.env')})`);
    // A value from the environment is not said to come from the file.
    const fromEnv = await run(['serve'], { PORT: 'ninety', DATABASE_URL: 'sqlite::memory:' }, envDir);
    expect(fromEnv.stderr).toContain('got "ninety"\n');
  });

  test('doctor, broken: every missing secret, the http BASE_URL, closed database and Redis ports, an unverified mail certificate, an open data folder', async () => {
    const smtp = await startTestSMTPServer({ starttls: 'self-signed' });
    cleanups.push(() => smtp.close());
    const dataDir = path.join(dir, 'open-data');
    mkdirSync(dataDir);
    chmodSync(dataDir, 0o755);
    const broken = await run(
      ['doctor'],
      {
        NODE_ENV: 'production',
        DATABASE_URL: `postgres://postgres@127.0.0.1:${closedPort}/gatehouse`,
        REDIS_URL: `redis://127.0.0.1:${closedPort}`,
      },
      dir,
    );
    expect(broken.code).toBe(1);
    expect(lineAbout(broken.stdout, 'JWT_SECRET')).toMatch(/^PROBLEM .*required in production.*openssl rand/);
    expect(lineAbout(broken.stdout, 'METRICS_TOKEN')).toMatch(/^PROBLEM /);
    expect(lineAbout(broken.stdout, 'BASE_URL')).toMatch(/^PROBLEM .*https/);
    expect(lineAbout(broken.stdout, 'DATABASE_URL')).toBe(
      `PROBLEM  DATABASE_URL: cannot connect to 127.0.0.1:${closedPort} (ECONNREFUSED) — is PostgreSQL running, and listening on that address?`,
    );
    expect(lineAbout(broken.stdout, 'REDIS_URL')).toBe(
      `PROBLEM  REDIS_URL: cannot connect to 127.0.0.1:${closedPort} (ECONNREFUSED) — is Redis running, and listening on that address?`,
    );
    expect(broken.stdout).toMatch(/^\d+ problems, \d+ warnings?: not ready for production$/m);

    // Configuration right, but the mail server's certificate does not verify and the SQLite folder is open to others.
    const sqlite = await run(
      ['doctor'],
      {
        ...goodSecrets(),
        DATABASE_URL: `sqlite:${path.join(dataDir, 'gatehouse.db')}`,
        SMTP_URL: smtp.url,
      },
      dir,
    );
    expect(sqlite.code).toBe(1);
    expect(lineAbout(sqlite.stdout, 'SMTP_URL')).toMatch(/^PROBLEM .*certificate/i);
    expect(lineAbout(sqlite.stdout, 'DATABASE_URL')).toMatch(/^PROBLEM .*does not exist yet — run gatehouse migrate/);
    expect(lineAbout(sqlite.stdout, 'data folder')).toBe(`PROBLEM  data folder: ${dataDir} is mode 0755: other users may look inside — chmod 700 ${dataDir}`);
    expect(lineAbout(sqlite.stdout, 'REDIS_URL')).toMatch(/^warning .*memory/);
  });

  test('doctor, good: PostgreSQL migrated, Redis, a mail server with a verified STARTTLS certificate → exit 0 with latencies', async () => {
    const certDir = path.join(dir, 'tls');
    mkdirSync(certDir);
    execFileSync('openssl', [
      'req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1', '-subj', '/CN=localhost', '-addext', 'subjectAltName=DNS:localhost',
      '-keyout', path.join(certDir, 'key.pem'), '-out', path.join(certDir, 'cert.pem'),
    ], { stdio: 'ignore' }); // prettier-ignore
    const smtp = new SMTPServer({
      key: readFileSync(path.join(certDir, 'key.pem')),
      cert: readFileSync(path.join(certDir, 'cert.pem')),
      disabledCommands: ['AUTH'],
      logger: false,
    });
    const port = await freePort();
    await new Promise<void>((resolve) => smtp.listen(port, '127.0.0.1', resolve));
    cleanups.push(() => new Promise<void>((resolve) => smtp.close(() => resolve())));
    expect((await run(['migrate'], { DATABASE_URL: schemaUrl }, dir)).code).toBe(0);

    const good = await run(
      ['doctor'],
      {
        ...goodSecrets(),
        ADMIN_API_KEY: 'k'.repeat(40),
        ENCRYPTION_KEY_BASE64: Buffer.alloc(32, 7).toString('base64'),
        DATABASE_URL: schemaUrl,
        REDIS_URL: redisUrl!,
        SMTP_URL: `smtp://localhost:${port}`,
        // The child trusts the certificate made above, as a machine trusts its mail server's CA.
        NODE_EXTRA_CA_CERTS: path.join(certDir, 'cert.pem'),
      },
      dir,
    );
    expect(good.stdout).toMatch(/^0 problems, 0 warnings: ready for production$/m);
    expect(good.code).toBe(0);
    expect(lineAbout(good.stdout, 'DATABASE_URL')).toMatch(/^ok +DATABASE_URL: PostgreSQL at 127\.0\.0\.1:\d+ answered in \d+ ms$/);
    expect(lineAbout(good.stdout, 'migrations')).toMatch(/up to date/);
    expect(lineAbout(good.stdout, 'REDIS_URL')).toMatch(/^ok +REDIS_URL: Redis at .* answered in \d+ ms/);
    expect(lineAbout(good.stdout, 'SMTP_URL')).toMatch(/^ok +SMTP_URL: localhost:\d+ accepted the connection with STARTTLS in \d+ ms$/);
    expect(lineAbout(good.stdout, 'TRUST_PROXY')).toMatch(/^ok /);
  });
});

/** A production environment whose configuration loads. */
function goodSecrets(): Record<string, string> {
  return { NODE_ENV: 'production', JWT_SECRET: TEST_JWT_SECRET, METRICS_TOKEN: 'm'.repeat(32), BASE_URL: 'https://auth.example.com', TRUST_PROXY: '1' };
}
