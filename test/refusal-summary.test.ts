/**
 * Refusals are counted, not logged one by one (src/audit/refusal-counter.ts): past a subject's
 * first refusal by a limit, the rest of its 15-minute window adds one summary row with the count,
 * while the metrics still count every refusal.
 */
import { afterEach, expect, test } from 'vitest';
import { MockClock } from '../src/clock.js';
import { loadConfig } from '../src/config.js';
import { createRefusalCounter, REFUSAL_WINDOW_MS } from '../src/audit/refusal-counter.js';
import type { AuditEvent } from '../src/audit/audit-log.js';
import { migrateToLatest, openDatabase } from '../src/db/connect.js';
import { createAuditStore } from '../src/db/audit-store.js';
import { createGatehouse } from '../src/gatehouse.js';
import { createLogger } from '../src/logger.js';
import { TEST_JWT_SECRET, createTestGatehouse, describeEachDialect, openTestDatabase, type TestGatehouse } from './support/harness.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

interface Row {
  id: number;
  type: string;
  ip: string | null;
  metadata: Record<string, unknown>;
  at: number;
}

const PROVIDER_ENV = {
  GITHUB_CLIENT_ID: 'client-id',
  GITHUB_CLIENT_SECRET: 'client-secret',
  AUTH_SECRET: 'test-auth-secret-0123456789',
  ENCRYPTION_KEY_BASE64: Buffer.alloc(32, 7).toString('base64'),
};
const WINDOW_START = '2026-11-22T12:00:00.000Z';
const WINDOW_END = '2026-11-22T12:15:00.000Z';

/** Prometheus text → the sum of the samples of `name` whose labels include every one of `labels`. */
function metricSum(text: string, name: string, labels: Record<string, string>): number {
  let sum = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`)) continue;
    if (!Object.entries(labels).every(([label, value]) => line.includes(`${label}="${value}"`))) continue;
    sum += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return sum;
}

describeEachDialect('refusals counted, not logged one by one', (dialect) => {
  let t: TestGatehouse | undefined;
  afterEach(async () => {
    await t?.close();
    t = undefined;
  });

  const rows = async (g: TestGatehouse): Promise<Row[]> => {
    const found = await g.database.kysely.selectFrom('audit_events').selectAll().orderBy('id').execute();
    return found.map((row) => ({
      id: Number(row.id),
      type: row.event_type,
      ip: row.ip,
      metadata: JSON.parse(row.metadata) as Record<string, unknown>,
      at: Number(row.created_at),
    }));
  };
  const login = (g: TestGatehouse, email: string, ip: string) => g.request('POST', '/api/auth/login', { json: { email, password: 'Wrong-Password-1' }, ip });
  const badCallback = (g: TestGatehouse, ip: string) => g.request('GET', '/api/auth/callback/github?code=x&state=y', { ip });
  const scrape = async (g: TestGatehouse): Promise<string> => {
    const response = await g.request('GET', '/metrics');
    expect(response.status).toBe(200);
    return response.text();
  };

  test('1,000 refused logins from one IP and 300 refused callbacks add a handful of rows; the summaries carry the counts; /metrics counts all', async () => {
    const g = (t = await createTestGatehouse(dialect, { env: PROVIDER_ENV }));
    const before = (await rows(g)).length;
    const flooder = '198.51.100.7';
    const caller = '198.51.100.8';
    // In waves of 100 at once, as a flood comes: the rows still go through the group commit.
    for (let wave = 0; wave < 10; wave++) {
      const answers = await Promise.all(Array.from({ length: 100 }, (_, i) => login(g, `flood${wave * 100 + i}@example.com`, flooder)));
      for (const answer of answers) expect([401, 429]).toContain(answer.status);
    }
    for (let wave = 0; wave < 3; wave++) {
      const answers = await Promise.all(Array.from({ length: 100 }, () => badCallback(g, caller)));
      for (const answer of answers) expect(answer.status).toBe(302);
    }

    // RATE_LIMIT_LOGIN (10/15m) lets ten through: five wrong passwords (the fifth locks the IP),
    // then five refused by the lock, each for another address, so each the first of its subject;
    // the other 990 are refused by the rate limit: one row, the first. RATE_LIMIT_OAUTH_CALLBACK
    // (20/15m) lets twenty bad callbacks be checked (each its row), and refuses 280: one row.
    const during = (await rows(g)).slice(before);
    const loginRows = during.filter((row) => row.metadata.method === 'password');
    const callbackRows = during.filter((row) => row.metadata.method === 'oauth');
    expect(loginRows.filter((row) => row.metadata.reason === 'unknown_email')).toHaveLength(5);
    expect(loginRows.filter((row) => row.metadata.reason === 'locked' || row.metadata.reason === 'busy')).toHaveLength(5);
    const firstLimited = loginRows.filter((row) => row.metadata.reason === 'rate_limited');
    expect(firstLimited).toHaveLength(1);
    // The first refusal keeps its own row, with all its detail.
    expect(firstLimited[0]).toMatchObject({ type: 'login_failure', ip: flooder, metadata: { email: expect.stringMatching(/^flood\d+@example\.com$/) } });
    expect(firstLimited[0]!.metadata).not.toHaveProperty('refusedCount');
    expect(callbackRows.filter((row) => row.metadata.reason !== 'rate_limited')).toHaveLength(20);
    expect(callbackRows.filter((row) => row.metadata.reason === 'rate_limited')).toEqual([
      expect.objectContaining({
        type: 'login_failure',
        ip: caller,
        metadata: { method: 'oauth', provider: 'github', error: 'oauth_failed', reason: 'rate_limited' },
      }),
    ]);
    expect(during).toHaveLength(5 + 5 + 1 + 20 + 1);

    // Every refusal is counted by the metrics, written one by one or not.
    const metrics = await scrape(g);
    expect(metricSum(metrics, 'gatehouse_logins_total', { method: 'password' })).toBe(1000);
    expect(metricSum(metrics, 'gatehouse_logins_total', { method: 'password', result: 'rate_limited' })).toBeGreaterThanOrEqual(990);
    expect(metricSum(metrics, 'gatehouse_logins_total', { method: 'oauth' })).toBe(300);
    expect(metricSum(metrics, 'gatehouse_logins_total', { method: 'oauth', result: 'rate_limited' })).toBe(280);
    expect(metricSum(metrics, 'gatehouse_rate_limit_refusals_total', { limit: 'login' })).toBe(990);
    expect(metricSum(metrics, 'gatehouse_rate_limit_refusals_total', { limit: 'oauthCallback' })).toBe(280);

    // Nothing more while the window lasts; once it is over, one row per subject says how many.
    await g.gatehouse.sweep();
    expect((await rows(g)).length - before).toBe(during.length);
    g.clock.advance(15 * 60_000);
    await g.gatehouse.sweep();
    const summaries = (await rows(g)).slice(before + during.length);
    expect(summaries).toHaveLength(2);
    const loginSummary = summaries.find((row) => row.metadata.method === 'password');
    expect(loginSummary).toMatchObject({
      type: 'login_failure',
      ip: flooder,
      metadata: { reason: 'rate_limited', method: 'password', refusedCount: 990, windowStart: WINDOW_START, windowEnd: WINDOW_END },
    });
    // The flood varied the address: the summary keeps only what every refusal shared.
    expect(loginSummary!.metadata).not.toHaveProperty('email');
    expect(summaries.find((row) => row.metadata.method === 'oauth')).toMatchObject({
      type: 'login_failure',
      ip: caller,
      metadata: { reason: 'rate_limited', provider: 'github', error: 'oauth_failed', refusedCount: 280, windowStart: WINDOW_START, windowEnd: WINDOW_END },
    });
    // Stamped with the last refusal's instant, inside the window, so retention and time filters see the flood.
    for (const summary of summaries) expect(summary.at).toBeLessThan(Date.parse(WINDOW_END));
    // Summaries are written once.
    await g.gatehouse.sweep();
    expect(await rows(g)).toHaveLength(before + during.length + 2);
  });

  test('the summary is written at the subject’s next refusal after the window, before that refusal’s own row; a lock’s refusals are counted per address', async () => {
    const g = (t = await createTestGatehouse(dialect, { env: { RATE_LIMIT_LOGIN: '100/15m', LOCKOUT_MAX_FAILURES: '3' } }));
    const register = await g.request('POST', '/api/auth/register', { json: { email: 'target@example.com', password: 'Correct-Horse-9' } });
    expect(register.status).toBe(201);
    for (let i = 0; i < 3; i++) expect((await login(g, 'target@example.com', `203.0.113.${i + 1}`)).status).toBe(401);
    // The address is locked: 40 tries from 40 other addresses are one subject, the account.
    for (let i = 0; i < 40; i++) expect((await login(g, 'target@example.com', `192.0.2.${i + 1}`)).status).toBe(429);
    const locked = () => rows(g).then((all) => all.filter((row) => row.metadata.reason === 'locked'));
    expect(await locked()).toHaveLength(1);
    expect((await locked())[0]).toMatchObject({ ip: '192.0.2.1', metadata: { email: 'target@example.com' } });

    // The lock (15 minutes) and the window end; the next failures lock it again, and its first refusal of the new window comes.
    g.clock.advance(15 * 60_000);
    for (let i = 0; i < 3; i++) expect((await login(g, 'target@example.com', '203.0.113.9')).status).toBe(401);
    expect((await login(g, 'target@example.com', '203.0.113.9')).status).toBe(429);
    const [first, summary, next] = await locked();
    expect(first!.metadata).not.toHaveProperty('refusedCount');
    // Refused from 40 addresses: the summary names the account, not one of them.
    expect(summary).toMatchObject({
      ip: null,
      metadata: {
        email: 'target@example.com',
        reason: 'locked',
        method: 'password',
        refusedCount: 40,
        severalIps: true,
        windowStart: WINDOW_START,
        windowEnd: WINDOW_END,
      },
    });
    expect(next).toMatchObject({ ip: '203.0.113.9', metadata: { email: 'target@example.com', reason: 'locked' } });
    expect(next!.metadata).not.toHaveProperty('refusedCount');
    expect(next!.id).toBeGreaterThan(summary!.id);
    expect(await locked()).toHaveLength(3);
  });

  test('past the cap on subjects counted at once, refusals of new subjects go to one overflow row; other events pass untouched (the store itself)', async () => {
    const { database, drop } = await openTestDatabase(dialect);
    try {
      await migrateToLatest(database);
      const inner = createAuditStore(database.kysely, dialect, { batchWrites: true });
      const counter = createRefusalCounter(inner, { maxTrackedSubjects: 2 });
      const start = Date.UTC(2026, 10, 22, 12, 0, 0);
      const refusal = (ip: string, second: number): AuditEvent => ({
        type: 'login_failure',
        userId: null,
        ip,
        userAgent: 'flood/1.0',
        metadata: { email: `${ip}@example.com`, reason: 'rate_limited', method: 'password' },
        at: new Date(start + second * 1000),
      });
      const writes: Promise<void>[] = [];
      for (let round = 0; round < 3; round++) for (let n = 1; n <= 5; n++) writes.push(counter.audit.recordEvent(refusal(`198.51.100.${n}`, round * 60 + n)));
      writes.push(
        counter.audit.recordEvent({ type: 'logout', userId: 'u1', ip: '198.51.100.1', userAgent: null, metadata: { sessionId: 's' }, at: new Date(start) }),
      );
      await Promise.all(writes);
      const listed = async () => (await inner.listRecentEvents(100)).reverse();
      expect((await listed()).map((event) => event.ip)).toEqual(['198.51.100.1', '198.51.100.2', '198.51.100.1']);

      // Before the window ends, nothing is summed up; after it, two summaries and the overflow.
      await counter.flushEnded(new Date(start + REFUSAL_WINDOW_MS - 1));
      expect(await listed()).toHaveLength(3);
      await counter.flushEnded(new Date(start + REFUSAL_WINDOW_MS));
      const summaries = (await listed()).slice(3);
      expect(summaries).toHaveLength(3);
      expect(
        summaries.filter((event) => event.metadata.overflow !== true).map((event) => [event.ip, event.metadata.refusedCount, event.metadata.email]),
      ).toEqual([
        ['198.51.100.1', 3, '198.51.100.1@example.com'],
        ['198.51.100.2', 3, '198.51.100.2@example.com'],
      ]);
      const spilled = summaries.find((event) => event.metadata.overflow === true);
      expect(spilled).toMatchObject({
        type: 'login_failure',
        ip: null,
        userAgent: 'flood/1.0',
        metadata: { reason: 'rate_limited', method: 'password', refusedCount: 9, severalIps: true },
      });
      expect(spilled!.metadata).not.toHaveProperty('email');
      // The summary's instant is the last refusal's.
      expect(spilled!.at.getTime()).toBe(start + 125_000);

      // Memory is freed with the window: a new window counts afresh.
      await counter.audit.recordEvent(refusal('198.51.100.5', REFUSAL_WINDOW_MS / 1000 + 1));
      expect((await listed()).at(-1)).toMatchObject({ ip: '198.51.100.5', metadata: { email: '198.51.100.5@example.com' } });
      await counter.flushAll();
      expect(await listed()).toHaveLength(7);
    } finally {
      await drop();
    }
  });
});

test('closing the gatehouse writes the counts of the window still running (SQLite file)', async () => {
  const folder = mkdtempSync(path.join(tmpdir(), 'gatehouse-refusals-'));
  const filename = path.join(folder, 'gatehouse.db');
  try {
    const config = loadConfig({
      JWT_SECRET: TEST_JWT_SECRET,
      BCRYPT_ROUNDS: '4',
      BASE_URL: 'http://localhost:3000',
      LOG_LEVEL: 'silent',
      RATE_LIMIT_LOGIN: '1/15m',
    });
    const gatehouse = await createGatehouse(config, {
      clock: new MockClock(Date.UTC(2026, 10, 22, 12, 5, 0)),
      database: openDatabase({ kind: 'sqlite', filename }),
      logger: createLogger({ level: 'silent' }),
      mailer: null,
    });
    const login = () =>
      gatehouse.fetch(
        new Request('http://localhost:3000/api/auth/login', {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ email: 'someone@example.com', password: 'Wrong-Password-1' }),
        }),
        { remoteAddress: '198.51.100.30' },
      );
    expect((await login()).status).toBe(401);
    for (let i = 0; i < 7; i++) expect((await login()).status).toBe(429);
    await gatehouse.close();

    const reopened = openDatabase({ kind: 'sqlite', filename });
    try {
      const refusals = await reopened.kysely.selectFrom('audit_events').select(['metadata']).orderBy('id').execute();
      const limited = refusals.map((row) => JSON.parse(row.metadata) as Record<string, unknown>).filter((metadata) => metadata.reason === 'rate_limited');
      expect(limited).toHaveLength(2);
      expect(limited[1]).toMatchObject({ refusedCount: 7, windowStart: WINDOW_START, windowEnd: WINDOW_END });
    } finally {
      await reopened.close();
    }
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
});
