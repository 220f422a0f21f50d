/** The server face, as an operator runs it: the built CLI in a child process, over real HTTP. */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';
import { loadConfig } from '../src/config.js';
import { securityHeaders } from '../src/http/security-headers.js';
import { shuttingDownAnswer } from '../src/server.js';

const CLI = path.resolve('dist/cli.js');
const children: ChildProcess[] = [];
const dirs: string[] = [];

afterEach(() => {
  for (const child of children.splice(0)) child.kill('SIGKILL');
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

function tempDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-'));
  dirs.push(dir);
  return dir;
}

interface Started {
  child: ChildProcess;
  url: string;
  output: () => string;
  exited: Promise<number | null>;
}

function run(args: string[], env: Record<string, string>, cwd: string): Started & { ready: Promise<string> } {
  const child = spawn(process.execPath, [CLI, ...args], {
    cwd,
    env: { PATH: process.env.PATH ?? '', PORT: '0', LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let output = '';
  const ready = new Promise<string>((resolve, reject) => {
    const onData = (chunk: Buffer): void => {
      output += chunk.toString();
      const match = /listening on (http:\/\/[^\s"]+)/.exec(output);
      if (match?.[1]) resolve(match[1]);
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.once('exit', () => reject(new Error(`exited before listening:\n${output}`)));
  });
  ready.catch(() => {});
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, url: '', output: () => output, exited, ready };
}

describe('gatehouse CLI', () => {
  test('npm start defaults: SQLite in ./data, a generated JWT secret kept with mode 0600, sessions survive a restart', async () => {
    const cwd = tempDir();
    const first = run(['serve'], {}, cwd);
    const url = await first.ready;
    expect((await fetch(`${url}/healthz`)).status).toBe(200);
    const register = await fetch(`${url}/api/auth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'restart@example.com', password: 'Correct-Horse-9' }),
    });
    expect(register.status).toBe(201);
    const cookie = register.headers.getSetCookie()[0]!.split(';')[0]!;
    expect(first.output()).toMatch(/JWT_SECRET is not set/);
    first.child.kill('SIGTERM');
    expect(await first.exited).toBe(0);

    const secretFile = path.join(cwd, 'data', 'jwt-secret');
    expect(fs.statSync(secretFile).mode & 0o777).toBe(0o600);
    expect(fs.existsSync(path.join(cwd, 'data', 'gatehouse.db'))).toBe(true);

    const second = run(['serve'], {}, cwd);
    const url2 = await second.ready;
    const session = await fetch(`${url2}/api/auth/session`, { headers: { cookie } });
    expect(session.status).toBe(200);
    second.child.kill('SIGTERM');
    expect(await second.exited).toBe(0);
  });

  test('a bad configuration stops the start with a message naming the variable, and no stack trace', async () => {
    const started = run(['serve'], { NODE_ENV: 'production', BCRYPT_ROUNDS: 'many' }, tempDir());
    expect(await started.exited).toBe(1);
    const output = started.output();
    expect(output).toMatch(/JWT_SECRET: required in production/);
    expect(output).toMatch(/BCRYPT_ROUNDS: expected a whole number/);
    expect(output).not.toMatch(/\n\s+at /);
  });

  test('gatehouse migrate applies the migrations and reports an up-to-date database the second time', async () => {
    const cwd = tempDir();
    const env = { DATABASE_URL: `sqlite:${path.join(cwd, 'm.db')}` };
    const first = run(['migrate'], env, cwd);
    expect(await first.exited).toBe(0);
    expect(first.output()).toMatch(/applied: 001-users-sessions-audit/);
    const second = run(['migrate'], env, cwd);
    expect(await second.exited).toBe(0);
    expect(second.output()).toMatch(/up to date/);
  });

  test('SIGTERM lets an in-flight request finish, then exits 0; the write is kept', async () => {
    const cwd = tempDir();
    // A high bcrypt cost keeps the registration in flight while the signal arrives.
    const started = run(['serve'], { BCRYPT_ROUNDS: '12', JWT_SECRET: 'x'.repeat(40) }, cwd);
    const url = await started.ready;
    const inFlight = fetch(`${url}/api/auth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'inflight@example.com', password: 'Correct-Horse-9' }),
    });
    await new Promise((resolve) => setTimeout(resolve, 150));
    started.child.kill('SIGTERM');
    const response = await inFlight;
    expect(response.status).toBe(201);
    expect(await started.exited).toBe(0);

    const again = run(['serve'], { BCRYPT_ROUNDS: '4', JWT_SECRET: 'x'.repeat(40) }, cwd);
    const url2 = await again.ready;
    const login = await fetch(`${url2}/api/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'inflight@example.com', password: 'Correct-Horse-9' }),
    });
    expect(login.status).toBe(200);
  });
});

describe('the answer while draining', () => {
  test('503 service_unavailable with Retry-After, JSON with charset, and the security headers of every answer', async () => {
    const config = loadConfig({ BASE_URL: 'https://auth.example.com' });
    const answer = shuttingDownAnswer(
      Object.fromEntries(securityHeaders({ contentSecurityPolicy: "default-src 'none'; frame-ancestors 'none'", httpsBaseUrl: config.httpsBaseUrl })),
    );
    expect(answer.status).toBe(503);
    expect(await answer.json()).toEqual({ error: 'service_unavailable', message: expect.any(String) });
    expect(answer.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(answer.headers.get('retry-after')).toBe('1');
    expect(answer.headers.get('connection')).toBe('close');
    expect(answer.headers.get('x-content-type-options')).toBe('nosniff');
    expect(answer.headers.get('cache-control')).toBe('no-store');
    expect(answer.headers.get('content-security-policy')).toBe("default-src 'none'; frame-ancestors 'none'");
    expect(answer.headers.get('strict-transport-security')).toBe('max-age=31536000; includeSubDomains');
  });
});
