import { randomUUID } from 'node:crypto';
import { afterEach, beforeEach, expect, test, vi } from 'vitest';
import { MockClock } from '../src/clock.js';
import { migrateToLatest } from '../src/db/connect.js';
import { createStores, type Stores } from '../src/db/stores.js';
import { backoffMs, deliverDueEmails } from '../src/outbox/dispatcher.js';
import { createConsoleMailer } from '../src/outbox/console-mailer.js';
import type { Mailer } from '../src/outbox/outbox.js';
import { createTestGatehouse, describeEachDialect, openTestDatabase } from './support/harness.js';

describeEachDialect('email outbox', (dialect) => {
  let stores: Stores;
  let drop: () => Promise<void>;
  const clock = new MockClock(Date.UTC(2026, 10, 22, 12));

  beforeEach(async () => {
    const opened = await openTestDatabase(dialect);
    drop = opened.drop;
    await migrateToLatest(opened.database);
    stores = createStores(opened.database.kysely, opened.database.dialect);
  });
  afterEach(async () => {
    await drop();
  });

  async function enqueue(expiresInMs = 60_000): Promise<string> {
    const id = randomUUID();
    await stores.outbox.enqueueEmail({
      id,
      recipient: 'to@example.com',
      template: 'password_reset',
      subject: 'Reset',
      text: 'link: https://x/reset-password?token=secret',
      html: '<a href="https://x/reset-password?token=secret">reset</a>',
      createdAt: clock.now(),
      expiresAt: new Date(clock.now().getTime() + expiresInMs),
    });
    return id;
  }

  test('a sent email loses its body, link included', async () => {
    const sent: string[] = [];
    await enqueue();
    const report = await deliverDueEmails({ outbox: stores.outbox, mailer: { send: async (e) => void sent.push(e.text) } }, clock.now());
    expect(report).toEqual({ sent: 1, failed: 0, expired: 0 });
    expect(sent[0]).toContain('token=secret');
    const [row] = await stores.outbox.listEmails(1);
    expect(row).toMatchObject({ status: 'sent', text: null, attempts: 0 });
  });

  test('a refused email is retried with backoff, then dead after the last attempt', async () => {
    const failing: Mailer = { send: async () => Promise.reject(new Error('550 mailbox unavailable')) };
    await enqueue(24 * 60 * 60_000);
    const now = new Date(clock.now());
    expect((await deliverDueEmails({ outbox: stores.outbox, mailer: failing, maxAttempts: 3 }, now)).failed).toBe(1);
    // not due again until the backoff has passed
    expect((await deliverDueEmails({ outbox: stores.outbox, mailer: failing, maxAttempts: 3 }, new Date(now.getTime() + backoffMs(1) - 1))).failed).toBe(0);
    let at = now.getTime() + backoffMs(1);
    expect((await deliverDueEmails({ outbox: stores.outbox, mailer: failing, maxAttempts: 3 }, new Date(at))).failed).toBe(1);
    at += backoffMs(2);
    expect((await deliverDueEmails({ outbox: stores.outbox, mailer: failing, maxAttempts: 3 }, new Date(at))).failed).toBe(1);
    const [row] = await stores.outbox.listEmails(1);
    expect(row).toMatchObject({ status: 'dead', attempts: 3, text: null, lastError: '550 mailbox unavailable' });
  });

  test('a queued email whose link expired is never sent, and its body is dropped', async () => {
    const sent: string[] = [];
    await enqueue(1000);
    const report = await deliverDueEmails(
      { outbox: stores.outbox, mailer: { send: async (e) => void sent.push(e.text) } },
      new Date(clock.now().getTime() + 1000),
    );
    expect(report.expired).toBe(1);
    expect(sent).toEqual([]);
    const [row] = await stores.outbox.listEmails(1);
    expect(row).toMatchObject({ status: 'expired', text: null });
  });

  test('without a sender (production) emails stay queued until their link expires', async () => {
    await enqueue(5000);
    expect(await deliverDueEmails({ outbox: stores.outbox, mailer: null }, clock.now())).toEqual({ sent: 0, failed: 0, expired: 0 });
    expect((await stores.outbox.listEmails(1))[0]?.status).toBe('queued');
  });
});

test('createConsoleMailer() prints the recipient, subject and body', async () => {
  let printed = '';
  await createConsoleMailer((text) => (printed += text)).send({ to: 'a@example.com', subject: 'Hi', text: 'Body with link', html: null });
  expect(printed).toContain('a@example.com');
  expect(printed).toContain('Subject: Hi');
  expect(printed).toContain('Body with link');
});

test('templates escape everything they put into HTML and name the product and lifetime', async () => {
  const { renderPasswordResetEmail, renderVerificationEmail } = await import('../src/outbox/templates.js');
  const url = 'https://auth.example/reset-password?token=a.b&x="><script>alert(1)</script>';
  const reset = renderPasswordResetEmail({ appName: 'Acme & Co', url, lifetimeHours: 1 });
  expect(reset.subject).toBe('Reset your Acme & Co password');
  expect(reset.html).not.toContain('<script>');
  expect(reset.html).toContain('&lt;script&gt;');
  expect(reset.html).toContain('Acme &amp; Co');
  expect(reset.html).toContain('href="https://auth.example/reset-password?token=a.b&amp;x=&quot;&gt;');
  expect(reset.text).toContain(url);
  expect(reset.text).toMatch(/expires in 1 hour\./);
  const verify = renderVerificationEmail({ appName: 'Acme', url: 'https://a/verify-email?token=t', lifetimeHours: 24 });
  expect(verify.text).toMatch(/expires in 24 hours\./);
  expect(verify.subject).toContain('Acme');
});

describeEachDialect('which sender the server uses', (dialect) => {
  async function startWith(env: Record<string, string>) {
    const { Writable } = await import('node:stream');
    const { createLogger } = await import('../src/logger.js');
    let logs = '';
    const logger = createLogger({ level: 'info', destination: new Writable({ write: (chunk, _e, done) => ((logs += chunk.toString()), done()) }) });
    // No mailer override: the configuration decides, as in `npm start`.
    const t = await createTestGatehouse(dialect, { env, overrides: { mailer: undefined, logger } });
    return { t, logs: () => logs };
  }

  test('production without SMTP_URL: emails stay queued, and the start says so once', async () => {
    const { t, logs } = await startWith({ NODE_ENV: 'production', BASE_URL: 'https://auth.example.com', BCRYPT_ROUNDS: '10', METRICS_PUBLIC: 'true' });
    try {
      await t.request('POST', '/api/auth/register', { json: { email: 'queued@example.com', password: 'Correct-Horse-9' } });
      await t.request('POST', '/api/auth/register', { json: { email: 'queued2@example.com', password: 'Correct-Horse-9' } });
      const report = await t.gatehouse.deliverQueuedEmails();
      expect(report.sent).toBe(0);
      const rows = await t.gatehouse.stores.outbox.listEmails(10);
      expect(rows.map((row) => row.status)).toEqual(['queued', 'queued']);
      expect(logs().match(/No email sender is configured/g)).toHaveLength(1);
    } finally {
      await t.close();
    }
  });

  test('without SMTP_URL outside production, emails are printed only with a loopback BASE_URL; with another they stay queued, and no link reaches the console', async () => {
    const printed: string[] = [];
    // The console sender writes to standard output: catch what it writes.
    const stdout = vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => (printed.push(String(chunk)), true));
    try {
      for (const [baseUrl, loopback] of [
        ['http://localhost:3000', true],
        ['http://[::1]:3000', true],
        ['https://auth.example.com', false],
        ['http://192.168.1.20:3000', false],
      ] as const) {
        printed.length = 0;
        const { t, logs } = await startWith({ BASE_URL: baseUrl });
        try {
          await t.request('POST', '/api/auth/register', { json: { email: 'console@example.com', password: 'Correct-Horse-9' } });
          await t.gatehouse.deliverQueuedEmails();
          const [row] = await t.gatehouse.stores.outbox.listEmails(1);
          if (loopback) {
            expect(row?.status, baseUrl).toBe('sent');
            expect(printed.join(''), baseUrl).toContain(`${baseUrl}/verify-email?token=`);
          } else {
            expect(row?.status, baseUrl).toBe('queued');
            expect(printed.join(''), baseUrl).not.toMatch(/verify-email|token=|console@example\.com/);
            expect(logs().match(/BASE_URL is not localhost, 127\.0\.0\.1 or \[::1\]: emails are not printed/g), baseUrl).toHaveLength(1);
            expect(logs()).not.toContain('token=');
          }
        } finally {
          await t.close();
        }
      }
    } finally {
      stdout.mockRestore();
    }
  });

  test('MAIL_DELIVERY=worker: the server only queues, even with SMTP_URL set', async () => {
    const { t } = await startWith({ SMTP_URL: 'smtp://127.0.0.1:9', MAIL_DELIVERY: 'worker' });
    try {
      await t.request('POST', '/api/auth/register', { json: { email: 'worker@example.com', password: 'Correct-Horse-9' } });
      await t.gatehouse.deliverQueuedEmails();
      expect((await t.gatehouse.stores.outbox.listEmails(1))[0]).toMatchObject({ status: 'queued', attempts: 0 });
    } finally {
      await t.close();
    }
  });
});
