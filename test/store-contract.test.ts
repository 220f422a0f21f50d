/** One contract per store interface, run on every available dialect. */
import { randomUUID } from 'node:crypto';
import { afterEach, beforeEach, expect, test } from 'vitest';
import { migrateToLatest, type DatabaseHandle } from '../src/db/connect.js';
import { createStores, type Stores } from '../src/db/stores.js';
import { describeEachDialect, openTestDatabase } from './support/harness.js';

describeEachDialect('store contract', (dialect) => {
  let database: DatabaseHandle;
  let drop: () => Promise<void>;
  let stores: Stores;
  const now = new Date(Date.UTC(2026, 10, 22, 12));

  beforeEach(async () => {
    ({ database, drop } = await openTestDatabase(dialect));
    await migrateToLatest(database);
    stores = createStores(database.kysely, database.dialect);
  });
  afterEach(async () => {
    await drop();
  });

  const newUser = (email: string | null) => ({ id: randomUUID(), email, passwordHash: '$2b$04$hash', emailVerified: false, createdAt: now });

  test('migrations are idempotent', async () => {
    const again = await migrateToLatest(database);
    expect(again.results).toEqual([]);
  });

  test('users: create, find by id and by email in any case, refuse a duplicate email', async () => {
    const user = newUser('Ann@Example.com');
    expect(await stores.users.createUser(user)).toBe('created');
    const byEmail = await stores.users.findUserByEmail('ANN@example.COM');
    expect(byEmail).toEqual({
      id: user.id,
      email: 'ann@example.com',
      emailVerified: false,
      passwordHash: '$2b$04$hash',
      createdAt: now,
      lastLoginAt: null,
      disabledAt: null,
      // A password for an address not proved yet may be someone else's (users/secure-unverified.ts).
      passwordUnproven: true,
      // No page language was known at creation; setLanguage below remembers one.
      language: null,
    });
    expect(await stores.users.findUserById(user.id)).toEqual(byEmail);
    await stores.users.setLanguage(user.id, 'de');
    expect((await stores.users.findUserById(user.id))?.language).toBe('de');
    // Verified from the signed-in browser, the password is its owner's; from another client it stays unproven.
    await stores.users.markEmailVerified(user.id, { passwordProven: false });
    expect(await stores.users.findUserById(user.id)).toMatchObject({ emailVerified: true, passwordUnproven: true });
    await stores.users.markEmailVerified(user.id, { passwordProven: true });
    expect(await stores.users.findUserById(user.id)).toMatchObject({ emailVerified: true, passwordUnproven: false });
    // Moved to an address by a link confirmed outside the account: its credentials predate that proof.
    // Removing the password alone proves nothing else; the next verification clears the mark.
    await stores.users.markCredentialsUnproven(user.id);
    await stores.users.removePassword(user.id);
    expect(await stores.users.findUserById(user.id)).toMatchObject({ passwordHash: null, passwordUnproven: true });
    await stores.users.markEmailVerified(user.id);
    expect(await stores.users.findUserById(user.id)).toMatchObject({ passwordUnproven: false });
    expect(await stores.users.createUser(newUser('ann@example.com'))).toBe('email_taken');
    expect(await stores.users.findUserById(randomUUID())).toBeNull();
  });

  test('users: several users without an email may coexist', async () => {
    expect(await stores.users.createUser(newUser(null))).toBe('created');
    expect(await stores.users.createUser(newUser(null))).toBe('created');
  });

  test('users: recordLogin stores the instant exactly', async () => {
    const user = newUser('ben@example.com');
    await stores.users.createUser(user);
    const at = new Date(now.getTime() + 1234);
    await stores.users.recordLogin(user.id, at);
    expect((await stores.users.findUserById(user.id))?.lastLoginAt).toEqual(at);
  });

  test('sessions: create, find with user, delete one, delete all of a user, delete expired', async () => {
    const user = newUser('cat@example.com');
    await stores.users.createUser(user);
    const session = (expiresAt: Date) => ({
      id: randomUUID(),
      userId: user.id,
      tokenHash: 'a'.repeat(64),
      expiresAt,
      createdAt: now,
      ip: '192.0.2.1',
      userAgent: 'UA',
      methods: ['password', 'totp'],
    });
    const s1 = session(new Date(now.getTime() + 1000));
    const s2 = session(new Date(now.getTime() + 5000));
    const s3 = session(new Date(now.getTime() + 9000));
    for (const s of [s1, s2, s3]) await stores.sessions.createSession(s);
    const found = await stores.sessions.findSessionWithUser(s1.id);
    const { ip: _ip, userAgent: _userAgent, ...checked } = s1;
    expect(found?.session).toEqual({ ...checked, lastSeenAt: now });
    expect(found?.user.email).toBe('cat@example.com');
    expect(await stores.sessions.deleteExpiredSessions(new Date(now.getTime() + 1000))).toBe(1);
    expect(await stores.sessions.findSessionWithUser(s1.id)).toBeNull();
    await stores.sessions.deleteSession(s2.id);
    expect(await stores.sessions.findSessionWithUser(s2.id)).toBeNull();
    await stores.sessions.createSession(session(new Date(now.getTime() + 9000)));
    expect(await stores.sessions.deleteUserSessionsReturningIds(user.id, null)).toHaveLength(2);
  });

  test("sessions: list a user's unexpired ones newest first, touch at most once per interval, delete one of a user's, delete the others", async () => {
    const user = newUser('dan@example.com');
    const other = newUser('eve@example.com');
    await stores.users.createUser(user);
    await stores.users.createUser(other);
    const make = (userId: string, createdAt: Date, lifetimeMs = 60_000) => ({
      id: randomUUID(),
      userId,
      tokenHash: 'b'.repeat(64),
      expiresAt: new Date(createdAt.getTime() + lifetimeMs),
      createdAt,
      ip: '2001:db8::1',
      userAgent: 'u'.repeat(600),
      methods: ['github'],
    });
    const older = make(user.id, now);
    const newer = make(user.id, new Date(now.getTime() + 1000));
    const expired = make(user.id, now, 10);
    const theirs = make(other.id, now);
    for (const s of [older, newer, expired, theirs]) await stores.sessions.createSession(s);
    const later = new Date(now.getTime() + 2000);
    const listed = await stores.sessions.listUserSessions(user.id, later);
    expect(listed.map((s) => s.id)).toEqual([newer.id, older.id]);
    expect(listed[0]).toMatchObject({ ip: '2001:db8::1', lastSeenAt: newer.createdAt });
    expect(listed[0]!.userAgent).toHaveLength(512);

    await stores.sessions.touchSession(older.id, new Date(now.getTime() + 30_000), 60_000);
    expect((await stores.sessions.findSessionWithUser(older.id))!.session.lastSeenAt).toEqual(now);
    await stores.sessions.touchSession(older.id, new Date(now.getTime() + 60_000), 60_000);
    expect((await stores.sessions.findSessionWithUser(older.id))!.session.lastSeenAt).toEqual(new Date(now.getTime() + 60_000));

    expect(await stores.sessions.deleteUserSession(user.id, theirs.id)).toBe(false);
    expect(await stores.sessions.findSessionWithUser(theirs.id)).not.toBeNull();
    expect((await stores.sessions.deleteUserSessionsReturningIds(user.id, newer.id)).sort()).toEqual([older.id, expired.id].sort());
    expect((await stores.sessions.listUserSessions(user.id, later)).map((s) => s.id)).toEqual([newer.id]);
    expect(await stores.sessions.deleteUserSession(user.id, newer.id)).toBe(true);
    expect(await stores.sessions.listUserSessions(user.id, later)).toEqual([]);
  });

  test('audit: events keep their order, fields and metadata', async () => {
    for (const type of ['user_created', 'login_success', 'login_failure'] as const) {
      await stores.audit.recordEvent({ type, userId: null, ip: '192.0.2.1', userAgent: 'x'.repeat(2000), metadata: { reason: type, n: 1, ok: true }, at: now });
    }
    const events = await stores.audit.listRecentEvents(2);
    expect(events.map((e) => e.type)).toEqual(['login_failure', 'login_success']);
    expect(events[0]).toMatchObject({ ip: '192.0.2.1', metadata: { reason: 'login_failure', n: 1, ok: true }, at: now });
    expect(events[0]!.userAgent).toHaveLength(512);
  });

  test('audit: rows written together keep every character (PostgreSQL sends them as array literals)', async () => {
    const awkward = ['"quoted"', 'back\\slash', '{braces}', 'a,b', 'NULL', '', ' padded ', 'ünïcødé ✓', "it's", '\\"{,}'];
    // Recorded in one turn: on PostgreSQL they go in one INSERT, each column one array.
    await Promise.all(
      awkward.map((text, index) =>
        stores.audit.recordEvent({
          type: 'login_failure',
          userId: index % 2 === 0 ? null : `user-${text}`,
          ip: index % 3 === 0 ? null : text,
          userAgent: text,
          metadata: { reason: text, email: `${text}@example.com`, n: index },
          at: new Date(now.getTime() + index),
        }),
      ),
    );
    const events = (await stores.audit.listRecentEvents(awkward.length)).reverse();
    expect(events.map((event) => [event.userId, event.ip, event.userAgent, event.metadata, event.at.getTime()])).toEqual(
      awkward.map((text, index) => [
        index % 2 === 0 ? null : `user-${text}`,
        index % 3 === 0 ? null : text,
        text,
        { reason: text, email: `${text}@example.com`, n: index },
        now.getTime() + index,
      ]),
    );
  });

  test('transaction: a failure inside rolls back every write', async () => {
    const user = newUser('dan@example.com');
    await expect(
      stores.transaction(async (tx) => {
        await tx.users.createUser(user);
        throw new Error('abort');
      }),
    ).rejects.toThrow('abort');
    expect(await stores.users.findUserById(user.id)).toBeNull();
  });
});
