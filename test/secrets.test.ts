/**
 * Runs every flow, then searches the database (the raw SQLite file and its WAL, or every
 * PostgreSQL table), the logs and the audit rows for every secret the run used: passwords,
 * session tokens, verification and reset tokens (and their secret halves), the JWT secret.
 * None may be found in usable form.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { sql } from 'kysely';
import { afterEach, expect, test } from 'vitest';
import { MockClock } from '../src/clock.js';
import { loadConfig } from '../src/config.js';
import { openDatabase, type DatabaseHandle } from '../src/db/connect.js';
import { createGatehouse } from '../src/gatehouse.js';
import { createLogger } from '../src/logger.js';
import { randomBytes } from 'node:crypto';
import { startFakeGitHub } from './support/fake-github.js';
import { TEST_JWT_SECRET, describeEachDialect, openTestDatabase, type SentEmail } from './support/harness.js';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describeEachDialect('secrets at rest and in logs', (dialect) => {
  test('no password, token, cookie or key used in any flow is stored, logged or audited in usable form', async () => {
    let database: DatabaseHandle;
    let rawDatabase: () => Promise<string>;
    if (dialect === 'sqlite') {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-secrets-'));
      const file = path.join(dir, 'g.db');
      database = openDatabase({ kind: 'sqlite', filename: file });
      cleanups.push(async () => fs.rmSync(dir, { recursive: true, force: true }));
      rawDatabase = async () =>
        fs
          .readdirSync(dir)
          .map((name) => fs.readFileSync(path.join(dir, name)).toString('latin1'))
          .join('\n');
    } else {
      const opened = await openTestDatabase('postgres');
      database = opened.database;
      cleanups.push(opened.drop);
      rawDatabase = async () => {
        const tables = ['users', 'sessions', 'audit_events', 'email_verification_tokens', 'password_reset_tokens', 'email_outbox', 'accounts'];
        const dumps = await Promise.all(tables.map((table) => sql`select * from ${sql.table(table)}`.execute(database.kysely)));
        return JSON.stringify(dumps.map((dump) => dump.rows));
      };
    }

    let logs = '';
    const logger = createLogger({
      level: 'trace',
      destination: new Writable({
        write(chunk, _encoding, callback) {
          logs += chunk.toString();
          callback();
        },
      }),
    });
    const emails: SentEmail[] = [];
    const clock = new MockClock(Date.UTC(2026, 10, 22, 12));
    const github = await startFakeGitHub();
    cleanups.push(() => github.close());
    const authSecret = `auth-${randomBytes(12).toString('hex')}`;
    const encryptionKey = randomBytes(32).toString('base64');
    const gatehouse = await createGatehouse(
      loadConfig({
        JWT_SECRET: TEST_JWT_SECRET,
        BCRYPT_ROUNDS: '4',
        LOG_LEVEL: 'trace',
        GITHUB_CLIENT_ID: github.clientId,
        GITHUB_CLIENT_SECRET: github.clientSecret,
        GITHUB_AUTH_URL: github.authUrl,
        GITHUB_API_URL: github.apiUrl,
        AUTH_SECRET: authSecret,
        ENCRYPTION_KEY_BASE64: encryptionKey,
      }),
      {
        clock,
        logger,
        database,
        mailer: { send: async (email) => void emails.push(email) },
      },
    );
    cleanups.push(() => gatehouse.close());

    const secrets = new Set<string>([TEST_JWT_SECRET, github.clientSecret, authSecret, encryptionKey]);
    const call = async (method: string, pathname: string, json?: unknown, cookie?: string) => {
      const response = await gatehouse.fetch(
        new Request(`http://localhost:3000${pathname}`, {
          method,
          headers: { ...(json ? { 'content-type': 'application/json' } : {}), ...(cookie ? { cookie } : {}) },
          body: json ? JSON.stringify(json) : undefined,
        }),
        { remoteAddress: '203.0.113.5' },
      );
      for (const header of response.headers.getSetCookie()) {
        const value = header.split(';')[0]!.split('=').slice(1).join('=');
        if (value) secrets.add(value);
      }
      return response;
    };
    const linkToken = (text: string) => decodeURIComponent(/token=([^\s]+)/.exec(text)![1]!);
    const remember = (token: string) => {
      secrets.add(token);
      secrets.add(token.split('.')[1]!);
    };

    const passwords = ['First-Password-1', 'Second-Password-2', 'Wrong-Password-3', 'Ünïcode-Pässword-4'];
    passwords.forEach((p) => secrets.add(p));

    const registered = await call('POST', '/api/auth/register', { email: 'secret@example.com', password: passwords[0] });
    expect(registered.status).toBe(201);
    const cookie = registered.headers.getSetCookie()[0]!.split(';')[0]!;
    await call('POST', '/api/auth/register', { email: 'other@example.com', password: passwords[3] });
    expect((await call('GET', '/api/auth/session', undefined, cookie)).status).toBe(200);
    expect((await call('POST', '/api/auth/resend-verification', {}, cookie)).status).toBe(200);
    await gatehouse.deliverQueuedEmails();
    const verificationTokens = emails.filter((e) => e.subject.includes('Confirm')).map((e) => linkToken(e.text));
    verificationTokens.forEach(remember);
    expect((await call('POST', '/api/auth/verify-email', { token: verificationTokens.at(-1) })).status).toBe(200);
    expect((await call('POST', '/api/auth/login', { email: 'secret@example.com', password: passwords[2] })).status).toBe(401);
    expect((await call('POST', '/api/auth/login', { email: 'nobody@example.com', password: passwords[2] })).status).toBe(401);
    expect((await call('POST', '/api/auth/password-reset/request', { email: 'secret@example.com' })).status).toBe(200);
    expect((await call('POST', '/api/auth/password-reset/request', { email: 'other@example.com' })).status).toBe(200);
    await gatehouse.deliverQueuedEmails();
    const resetEmails = emails.filter((e) => e.subject.includes('Reset'));
    resetEmails.forEach((e) => remember(linkToken(e.text)));
    // Reset requests run off the response path; a failure there would only be logged.
    expect(
      logs.split('\n').filter((line) => line.includes('"level":50')),
      'errors logged',
    ).toEqual([]);
    const ownReset = linkToken(resetEmails.find((e) => e.to === 'secret@example.com')!.text);
    expect((await call('POST', '/api/auth/password-reset/confirm', { token: ownReset, password: passwords[1] })).status).toBe(200);
    const login = await call('POST', '/api/auth/login', { email: 'secret@example.com', password: passwords[1] });
    expect(login.status).toBe(200);
    await call('POST', '/api/auth/logout', {}, login.headers.getSetCookie()[0]!.split(';')[0]);
    await gatehouse.deliverQueuedEmails();

    // Sign in with GitHub twice (a new user, then the link again): codes, state, the flow
    // cookie, and the provider's access and refresh tokens are all secrets.
    github.expiringTokens = true;
    github.setUser({ id: 4242, login: 'octo', emails: [{ email: 'secret@example.com', primary: true, verified: true }] });
    for (let round = 0; round < 2; round++) {
      const started = await call('GET', '/api/auth/oauth/github');
      expect(started.status).toBe(302);
      const flowCookie = started.headers.getSetCookie()[0]!.split(';')[0]!;
      const callbackUrl = await github.authorize(started.headers.get('location')!, { login: 'octo' });
      secrets.add(callbackUrl.searchParams.get('code')!);
      secrets.add(callbackUrl.searchParams.get('state')!);
      const finished = await call('GET', `${callbackUrl.pathname}${callbackUrl.search}`, undefined, flowCookie);
      expect(finished.status).toBe(302);
      expect(finished.headers.get('location')).toBe('/dashboard');
    }
    github.issuedTokens.forEach((token) => secrets.add(token));
    expect(github.issuedTokens.length).toBeGreaterThanOrEqual(4);

    expect(secrets.size).toBeGreaterThan(10);
    const audit = JSON.stringify(await gatehouse.stores.audit.listRecentEvents(1000));
    const stored = await rawDatabase();
    // The scan reads real rows: the linked account and its encrypted tokens are there.
    expect(stored).toContain('octo');
    expect(stored).toMatch(/v1\.[A-Za-z0-9_-]+\./);
    for (const secret of secrets) {
      const forms = [secret, Buffer.from(secret).toString('base64'), encodeURIComponent(secret)];
      for (const form of forms) {
        expect(stored.includes(form), `database holds ${secret.slice(0, 12)}…`).toBe(false);
        expect(logs.includes(form), `logs hold ${secret.slice(0, 12)}…`).toBe(false);
        expect(audit.includes(form), `audit holds ${secret.slice(0, 12)}…`).toBe(false);
      }
    }
  });
});
