/**
 * The password reset request and the email sign-in request answer before any work that depends
 * on the address (SPEC §5, DESIGN §9.9): the answer for a known email and for an unknown one is
 * made of the same steps — the body, the rate limits — and neither waits for the database. Shown
 * by freezing PostgreSQL (every connection stalls, through a relay) while Redis keeps counting:
 * both answers still come at once, alike. This is why the bench's timing parity of these requests
 * can only spread by noise (docs/performance.md).
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { STRONG_PASSWORD, createTestGatehouse, describeEachDialect, type TestGatehouse } from './support/harness.js';
import { postgresUrl, redisUrl } from './support/services.js';
import { TcpRelay } from './support/tcp-relay.js';

/** Far below DATABASE_QUERY_TIMEOUT (5 s): an answer that waited for the frozen database would take that long and be a 503. */
const PROMPT_MS = 1500;

describe.skipIf(postgresUrl === null || redisUrl === null)('answers that come before their work (PostgreSQL frozen, Redis answering)', () => {
  const relay = TcpRelay.to(postgresUrl ?? 'postgres://127.0.0.1:5432', 5432);
  let t: TestGatehouse;

  beforeAll(async () => {
    await relay.open();
    t = await createTestGatehouse('postgres', {
      connectVia: relay.urlFor(postgresUrl!),
      env: { REDIS_URL: redisUrl!, REDIS_KEY_PREFIX: `gh-test-${randomBytes(6).toString('hex')}` },
    });
    expect((await t.request('POST', '/api/auth/register', { json: { email: 'known@example.com', password: STRONG_PASSWORD } })).status).toBe(201);
  });
  afterAll(async () => {
    // Ending the stall drops the frozen connections: the work still waiting on them fails at once.
    await relay.unstall();
    await t?.close();
    await relay.cut();
  });

  test.each(['/api/auth/password-reset/request', '/api/auth/email-sign-in/request'])(
    '%s: a known and an unknown email get the same answer at once while the database does not answer',
    async (path) => {
      relay.stall('all');
      try {
        const answers = [];
        for (const email of ['known@example.com', 'unknown@example.com']) {
          const started = Date.now();
          const response = await t.request('POST', path, { json: { email } });
          answers.push({ status: response.status, text: await response.text(), ms: Date.now() - started });
        }
        expect(answers.map((answer) => answer.status)).toEqual([200, 200]);
        expect(answers[0]!.text).toBe(answers[1]!.text);
        for (const answer of answers) expect(answer.ms).toBeLessThan(PROMPT_MS);
      } finally {
        await relay.unstall();
      }
    },
  );
});

/**
 * The same rule where the database runs on the server's own thread (SQLite): the work starts only
 * once the answer is out, so none of it — the lookup, the token, the email, the audit row — can
 * make the answer for a known address later than for an unknown one.
 */
describeEachDialect('answers that come before their work', (dialect) => {
  test('a reset request and an email sign-in request have done none of their work when they answer; all of it once the background settles', async () => {
    const g = await createTestGatehouse(dialect);
    try {
      expect((await g.request('POST', '/api/auth/register', { json: { email: 'known@example.com', password: STRONG_PASSWORD } })).status).toBe(201);
      const resetRequested = async () =>
        (await g.gatehouse.stores.audit.listRecentEvents(50)).filter((event) => event.metadata.reason === 'password_reset_requested').length;
      for (const email of ['known@example.com', 'unknown@example.com']) {
        const before = await resetRequested();
        expect((await g.request('POST', '/api/auth/password-reset/request', { json: { email } })).status).toBe(200);
        expect(await resetRequested(), email).toBe(before);
        await g.gatehouse.deliverQueuedEmails();
        expect(await resetRequested(), email).toBe(before + 1);
      }
      expect((await g.request('POST', '/api/auth/email-sign-in/request', { json: { email: 'known@example.com' } })).status).toBe(200);
      expect(await g.gatehouse.stores.emailSignIns.findEmailSignInByEmail('known@example.com')).toBeNull();
      await g.gatehouse.deliverQueuedEmails();
      expect(await g.gatehouse.stores.emailSignIns.findEmailSignInByEmail('known@example.com')).not.toBeNull();
    } finally {
      await g.close();
    }
  });
});
