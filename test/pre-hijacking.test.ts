/**
 * Account pre-hijacking, the victim's-click variant: an attacker registers the victim's address
 * with a password of their own and waits for the victim to confirm it. The verification email and
 * page offer "I did not create this account", which deletes the unverified account, the
 * attacker's sessions with it (issue 22 item 6).
 */
import { afterEach, beforeEach, expect, test } from 'vitest';
import { STRONG_PASSWORD, cookieFrom, createTestGatehouse, describeEachDialect, type TestGatehouse } from './support/harness.js';

const COOKIE = 'gatehouse_session';
const ATTACKER_PASSWORD = 'Squatter-Pass-42';

describeEachDialect('pre-hijacking: "I did not create this account"', (dialect) => {
  let t: TestGatehouse;
  beforeEach(async () => {
    t = await createTestGatehouse(dialect);
  });
  afterEach(async () => {
    await t.close();
  });

  /** The attacker registers the victim's address; the victim receives the verification email. */
  async function squat(): Promise<{ attackerCookie: string; token: string; userId: string }> {
    const registered = await t.request('POST', '/api/auth/register', {
      json: { email: 'victim@example.com', password: ATTACKER_PASSWORD },
      ip: '198.51.100.66',
    });
    expect(registered.status).toBe(201);
    await t.gatehouse.deliverQueuedEmails();
    const email = t.sentEmails.findLast((sent) => sent.to === 'victim@example.com')!;
    expect(email.text).toContain('I did not create this account');
    const token = decodeURIComponent(/verify-email\?token=([^\s]+)/.exec(email.text)![1]!);
    const user = await t.gatehouse.stores.users.findUserByEmail('victim@example.com');
    return { attackerCookie: cookieFrom(registered, COOKIE)!, token, userId: user!.id };
  }
  const decline = (token: unknown) => t.request('POST', '/api/auth/verify-email/decline', { json: { token } });

  test('the verification page asks before deleting: the deleting button sits in a closed disclosure opened by "I did not create this account"', async () => {
    const { token } = await squat();
    const page = await (await t.request('GET', `/verify-email?token=${encodeURIComponent(token)}`)).text();
    const disclosure = /<details id="decline">([\s\S]*?)<\/details>/.exec(page);
    expect(disclosure).not.toBeNull();
    expect(disclosure![1]).toContain('<summary>I did not create this account</summary>');
    expect(disclosure![1]).toMatch(/<form id="decline-form"[^>]*data-api="\/api\/auth\/verify-email\/decline"[\s\S]*>Yes, delete this account<\/button>/);
    expect(disclosure![1]).toContain('cannot be undone');
    // Closed until asked, and the only way to the deletion.
    expect(page).not.toMatch(/<details id="decline" open/);
    expect(page.match(/verify-email\/decline/g)).toHaveLength(1);
  });

  test('the owner of the mailbox deletes the squatted account: the attacker is signed out and cannot sign in; the address is free', async () => {
    const { attackerCookie, token, userId } = await squat();
    expect((await t.request('GET', '/api/auth/session', { cookie: attackerCookie })).status).toBe(200);

    const declined = await decline(token);
    expect(declined.status).toBe(200);
    expect(await declined.json()).toEqual({ message: expect.any(String), deleted: true });

    expect((await t.request('GET', '/api/auth/session', { cookie: attackerCookie })).status).toBe(401);
    expect((await t.request('POST', '/api/auth/login', { json: { email: 'victim@example.com', password: ATTACKER_PASSWORD } })).status).toBe(401);
    expect(await t.gatehouse.stores.users.findUserByEmail('victim@example.com')).toBeNull();
    expect(await t.database.kysely.selectFrom('sessions').select('id').where('user_id', '=', userId).execute()).toEqual([]);
    expect(await t.database.kysely.selectFrom('email_verification_tokens').select('id').where('user_id', '=', userId).execute()).toEqual([]);
    // The audit keeps what happened, keyed by the user id, without the address.
    const rows = await t.database.kysely.selectFrom('audit_events').selectAll().where('event_type', '=', 'account_deleted').execute();
    expect(rows).toHaveLength(1);
    expect(rows[0]!.user_id).toBe(userId);
    expect(rows[0]!.metadata).not.toContain('victim');
    // The owner can now register the address with their own password.
    expect((await t.request('POST', '/api/auth/register', { json: { email: 'victim@example.com', password: STRONG_PASSWORD } })).status).toBe(201);
  });

  test('the link works once, and a confirmed link can no longer delete', async () => {
    const { token } = await squat();
    expect((await decline(token)).status).toBe(200);
    const again = await decline(token);
    expect(again.status).toBe(400);
    expect((await again.json()).error).toBe('invalid_token');

    const second = await squat();
    expect((await t.request('POST', '/api/auth/verify-email', { json: { token: second.token } })).status).toBe(200);
    expect((await decline(second.token)).status).toBe(400);
    expect(await t.gatehouse.stores.users.findUserByEmail('victim@example.com')).not.toBeNull();
  });

  test('a verified account is never deleted this way, even with a verification token still outstanding', async () => {
    const { token, userId } = await squat();
    await t.gatehouse.stores.users.markEmailVerified(userId);
    const refused = await decline(token);
    expect(refused.status).toBe(400);
    expect((await refused.json()).error).toBe('invalid_token');
    expect(await t.gatehouse.stores.users.findUserById(userId)).not.toBeNull();
  });

  test('unknown, malformed and tampered tokens answer invalid_token and delete nothing', async () => {
    const { token } = await squat();
    for (const bad of ['nope', `${token}x`, `${'A'.repeat(22)}.${'B'.repeat(43)}`]) {
      const response = await decline(bad);
      expect(response.status, bad).toBe(400);
      expect((await response.json()).error).toBe('invalid_token');
    }
    expect((await decline(12)).status).toBe(400);
    expect(await t.gatehouse.stores.users.findUserByEmail('victim@example.com')).not.toBeNull();
  });

  test('emails still queued for the deleted account are purged: no link to it is sent afterwards', async () => {
    // No sender: every email stays queued in the outbox, as in production before SMTP is set up.
    await t.close();
    t = await createTestGatehouse(dialect, { overrides: { mailer: null } });
    expect((await t.request('POST', '/api/auth/register', { json: { email: 'victim@example.com', password: ATTACKER_PASSWORD } })).status).toBe(201);
    const queued = await t.database.kysely.selectFrom('email_outbox').select('body_text').where('status', '=', 'queued').execute();
    expect(queued).toHaveLength(1);
    const token = decodeURIComponent(/verify-email\?token=([^\s]+)/.exec(queued[0]!.body_text!)![1]!);
    expect((await decline(token)).status).toBe(200);
    expect(await t.database.kysely.selectFrom('email_outbox').select('id').where('status', '=', 'queued').execute()).toEqual([]);
    const purged = await t.database.kysely.selectFrom('email_outbox').select(['status', 'body_text']).execute();
    expect(purged).toEqual([{ status: 'expired', body_text: null }]);
  });
});
