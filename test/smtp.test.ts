/** Delivery of queued emails over SMTP, against a real SMTP server on loopback. */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { systemClock } from '../src/clock.js';
import { loadConfig } from '../src/config.js';
import { migrateToLatest, openDatabase } from '../src/db/connect.js';
import { createStores } from '../src/db/stores.js';
import { createLogger } from '../src/logger.js';
import { createSmtpMailer } from '../src/outbox/smtp-mailer.js';
import { drainOutbox } from '../src/outbox/worker.js';
import { STRONG_PASSWORD, createTestGatehouse, describeEachDialect, openTestDatabase, type TestGatehouse } from './support/harness.js';
import { postgresUrl } from './support/services.js';
import { startTestSMTPServer, type TestSMTPServer } from './support/smtp-server.js';

let smtp: TestSMTPServer;
beforeEach(async () => {
  smtp = await startTestSMTPServer();
});
afterEach(async () => {
  await smtp.close();
});

describeEachDialect('SMTP delivery from the server', (dialect) => {
  let t: TestGatehouse;
  beforeEach(async () => {
    t = await createTestGatehouse(dialect, {
      // The test server speaks plain SMTP: allowed here explicitly (SMTP_TLS=off), never by default.
      env: {
        NODE_ENV: 'development',
        SMTP_URL: smtp.url,
        SMTP_TLS: 'off',
        APP_NAME: 'Acme Corp',
        MAIL_FROM: '"Acme" <no-reply@acme.example>',
        MAIL_MAX_ATTEMPTS: '2',
      },
      overrides: { mailer: undefined },
    });
  });
  afterEach(async () => {
    await t.close();
  });

  test('the verification email arrives with the product name, the link, its lifetime, text and HTML', async () => {
    const response = await t.request('POST', '/api/auth/register', { json: { email: 'smtp@example.com', password: STRONG_PASSWORD } });
    const { verificationUrl } = await response.json();
    await t.gatehouse.deliverQueuedEmails();
    expect(smtp.messages).toHaveLength(1);
    const [message] = smtp.messages;
    expect(message!.from).toBe('no-reply@acme.example');
    expect(message!.to).toEqual(['smtp@example.com']);
    expect(message!.raw).toMatch(/Subject: Confirm your email address for Acme Corp/);
    expect(message!.raw).toContain('Content-Type: text/plain');
    expect(message!.raw).toContain('Content-Type: text/html');
    expect(message!.raw).toContain(verificationUrl);
    expect(message!.raw).toMatch(/expires in 24 hours/);
    const [row] = await t.gatehouse.stores.outbox.listEmails(1);
    expect(row).toMatchObject({ status: 'sent', text: null, html: null, attempts: 0 });
  });

  test('a refused email is retried after its backoff, and dead after MAIL_MAX_ATTEMPTS', async () => {
    smtp.refuseWith = { code: 550, message: 'Mailbox unavailable' };
    await t.request('POST', '/api/auth/password-reset/request', { json: { email: 'nobody@example.com' } });
    await t.request('POST', '/api/auth/register', { json: { email: 'refused@example.com', password: STRONG_PASSWORD } });
    await t.gatehouse.deliverQueuedEmails();
    let [row] = await t.gatehouse.stores.outbox.listEmails(1);
    expect(row).toMatchObject({ status: 'queued', attempts: 1 });
    expect(row!.lastError).toMatch(/550/);
    expect(row!.lastError).not.toContain('verify-email');

    // Not retried before the backoff has passed.
    await t.gatehouse.deliverQueuedEmails();
    expect((await t.gatehouse.stores.outbox.listEmails(1))[0]!.attempts).toBe(1);

    t.clock.advance(30_000);
    await t.gatehouse.deliverQueuedEmails();
    [row] = await t.gatehouse.stores.outbox.listEmails(1);
    expect(row).toMatchObject({ status: 'dead', attempts: 2, text: null, html: null });
    expect(smtp.messages).toHaveLength(0);
  });

  test('after a refusal, the retry is delivered once the server accepts', async () => {
    smtp.refuseWith = { code: 451, message: 'Try again later' };
    await t.request('POST', '/api/auth/register', { json: { email: 'later@example.com', password: STRONG_PASSWORD } });
    await t.gatehouse.deliverQueuedEmails();
    smtp.refuseWith = null;
    t.clock.advance(30_000);
    await t.gatehouse.deliverQueuedEmails();
    expect(smtp.messages.map((m) => m.to[0])).toEqual(['later@example.com']);
    expect((await t.gatehouse.stores.outbox.listEmails(1))[0]).toMatchObject({ status: 'sent', attempts: 1 });
  });
});

describe.skipIf(!postgresUrl)('two senders on one PostgreSQL', () => {
  test('every email is sent exactly once', async () => {
    const { database, drop } = await openTestDatabase('postgres');
    await migrateToLatest(database);
    const stores = createStores(database.kysely, 'postgres');
    const now = new Date();
    const count = 60;
    for (let i = 0; i < count; i++) {
      await stores.outbox.enqueueEmail({
        id: randomUUID(),
        recipient: `user${i}@example.com`,
        template: 'email_verification',
        subject: `Message ${i}`,
        text: `Body ${i}`,
        html: `<p>Body ${i}</p>`,
        createdAt: new Date(now.getTime() - 1000),
        expiresAt: new Date(now.getTime() + 3_600_000),
      });
    }
    // Two senders, each with its own connection pool, as two worker processes would have.
    const second = await openTestDatabaseSharingSchema(database);
    const logger = createLogger({ level: 'silent' });
    const worker = (outboxStores: typeof stores) =>
      drainOutbox({
        outbox: outboxStores.outbox,
        mailer: createSmtpMailer({ url: smtp.url, from: 'a@b.example', tls: 'off' }),
        clock: systemClock,
        logger,
        maxAttempts: 3,
        afterPurge: async () => {},
      });
    try {
      const [a, b] = await Promise.all([worker(stores), worker(createStores(second.kysely, 'postgres'))]);
      expect(a.sent + b.sent).toBe(count);
      expect(a.sent).toBeGreaterThan(0);
      expect(b.sent).toBeGreaterThan(0);
      const recipients = smtp.messages.map((m) => m.to[0]);
      expect(recipients).toHaveLength(count);
      expect(new Set(recipients).size).toBe(count);
      const rows = await stores.outbox.listEmails(count);
      expect(rows.every((row) => row.status === 'sent' && row.text === null)).toBe(true);
    } finally {
      await second.close();
      await drop();
    }
  });
});

/** A second pool onto the same throwaway schema (read from the first pool's search_path). */
async function openTestDatabaseSharingSchema(first: Awaited<ReturnType<typeof openTestDatabase>>['database']) {
  const { sql } = await import('kysely');
  const { rows } = await sql<{ schema: string }>`select current_schema() as schema`.execute(first.kysely);
  return openDatabase({ kind: 'postgres', connectionString: postgresUrl! }, { postgresSchema: rows[0]!.schema, poolSize: 5 });
}

describe('gatehouse mail and gatehouse outbox (CLI)', () => {
  test('mail --once sends what is due; outbox lists it without the link', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-mail-'));
    try {
      const file = path.join(dir, 'g.db');
      const database = openDatabase({ kind: 'sqlite', filename: file });
      await migrateToLatest(database);
      const stores = createStores(database.kysely, 'sqlite');
      const link = 'http://localhost:3000/reset-password?token=AAAAAAAAAAAAAAAAAAAAAA.secretsecretsecretsecretsecretsecretsecret1';
      await stores.outbox.enqueueEmail({
        id: randomUUID(),
        recipient: 'cli@example.com',
        template: 'password_reset',
        subject: 'Reset',
        text: `Open ${link}`,
        html: `<a href="${link}">reset</a>`,
        createdAt: new Date(Date.now() - 1000),
        expiresAt: new Date(Date.now() + 3_600_000),
      });
      await database.close();

      const env = { PATH: process.env.PATH ?? '', DATABASE_URL: `sqlite:${file}`, SMTP_URL: smtp.url, SMTP_TLS: 'off', LOG_LEVEL: 'silent' };
      const run = (args: string[]) =>
        new Promise<{ code: number | null; output: string }>((resolve) => {
          const child = spawn(process.execPath, [path.resolve('dist/cli.js'), ...args], { env, cwd: dir });
          let output = '';
          child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
          child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
          child.on('exit', (code) => resolve({ code, output }));
        });

      const before = await run(['outbox']);
      expect(before.code).toBe(0);
      expect(before.output).toMatch(/queued\s+password_reset\s+cli@example\.com\s+0/);
      expect(before.output).not.toContain('secret');

      const mail = await run(['mail', '--once']);
      expect(mail.code).toBe(0);
      expect(smtp.messages.map((m) => m.to[0])).toEqual(['cli@example.com']);
      expect(smtp.messages[0]!.raw).toContain(link);

      const after = await run(['outbox']);
      expect(after.output).toMatch(/sent\s+password_reset\s+cli@example\.com/);
      expect(after.output).not.toContain('secret');
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  test('mail without SMTP_URL stops with a message naming it', async () => {
    const result = await new Promise<{ code: number | null; output: string }>((resolve) => {
      const child = spawn(process.execPath, [path.resolve('dist/cli.js'), 'mail', '--once'], {
        env: { PATH: process.env.PATH ?? '', DATABASE_URL: 'sqlite::memory:' },
      });
      let output = '';
      child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
      child.on('exit', (code) => resolve({ code, output }));
    });
    expect(result.code).toBe(1);
    expect(result.output).toMatch(/SMTP_URL: required/);
  });
});

describe('SMTP never downgrades (SMTP_TLS=required, the default)', () => {
  const email = { to: 'someone@example.com', subject: 'Reset', text: 'Open https://auth.example.com/reset-password?token=secret', html: null };

  test('a server that offers no STARTTLS (as a stripping man in the middle makes it look) gets nothing', async () => {
    const mailer = createSmtpMailer({ url: smtp.url, from: 'a@b.example', tls: 'required' });
    try {
      await expect(mailer.send(email)).rejects.toThrow(/STARTTLS/i);
      expect(smtp.messages).toEqual([]);
    } finally {
      await mailer.close?.();
    }
  });

  test('a server whose certificate does not verify gets nothing: certificate checks stay on', async () => {
    const selfSigned = await startTestSMTPServer({ starttls: 'self-signed' });
    const mailer = createSmtpMailer({ url: selfSigned.url, from: 'a@b.example', tls: 'required' });
    try {
      await expect(mailer.send(email)).rejects.toThrow(/certificate/i);
      expect(selfSigned.messages).toEqual([]);
    } finally {
      await mailer.close?.();
      await selfSigned.close();
    }
  });

  test('SMTP_TLS=off, chosen explicitly, sends plain SMTP', async () => {
    const mailer = createSmtpMailer({ url: smtp.url, from: 'a@b.example', tls: 'off' });
    try {
      await mailer.send(email);
      expect(smtp.messages.map((message) => message.to)).toEqual([['someone@example.com']]);
    } finally {
      await mailer.close?.();
    }
  });

  test('SMTP_TLS takes required or off; anything else stops the start naming it', () => {
    expect(loadConfig({}).mail.smtpTls).toBe('required');
    expect(loadConfig({ SMTP_TLS: 'off' }).mail.smtpTls).toBe('off');
    expect(() => loadConfig({ SMTP_TLS: 'maybe' })).toThrow(/SMTP_TLS: expected required or off/);
    // nodemailer would let URL parameters undo the TLS settings: none are accepted.
    expect(() => loadConfig({ SMTP_URL: 'smtp://mail.example.com:587?ignoreTLS=true' })).toThrow(/SMTP_URL: expected no query parameters/);
  });
});
