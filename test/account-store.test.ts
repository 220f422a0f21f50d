/** Contract of AccountStore (linked provider accounts), on every available dialect. */
import { randomUUID } from 'node:crypto';
import { afterEach, beforeEach, expect, test } from 'vitest';
import { migrateToLatest, type DatabaseHandle } from '../src/db/connect.js';
import { createStores, type Stores } from '../src/db/stores.js';
import type { LinkedAccount } from '../src/oauth/store.js';
import { describeEachDialect, openTestDatabase } from './support/harness.js';

describeEachDialect('account store contract', (dialect) => {
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

  const newUser = async (): Promise<string> => {
    const id = randomUUID();
    await stores.users.createUser({ id, email: null, passwordHash: '$2b$04$hash', emailVerified: false, createdAt: now });
    return id;
  };
  const account = (userId: string, providerAccountId: string): LinkedAccount => ({
    id: randomUUID(),
    userId,
    provider: 'github',
    providerAccountId,
    providerLogin: 'octocat',
    accessTokenEnc: 'v1.k.iv.ct.tag',
    refreshTokenEnc: null,
    accessTokenExpiresAt: new Date(now.getTime() + 28_800_000),
    scope: 'read:user user:email',
    createdAt: now,
    updatedAt: now,
  });

  test('create, find by (provider, provider account id), list by user; times and nulls round-trip', async () => {
    const userId = await newUser();
    const linked = account(userId, '583231');
    expect(await stores.accounts.createAccount(linked)).toBe('created');
    expect(await stores.accounts.findAccount('github', '583231')).toEqual(linked);
    expect(await stores.accounts.findAccount('gitlab', '583231')).toBeNull();
    expect(await stores.accounts.listUserAccounts(userId)).toEqual([linked]);
  });

  test('a second link of the same provider account is refused without throwing, even inside a transaction', async () => {
    const [a, b] = [await newUser(), await newUser()];
    await stores.accounts.createAccount(account(a, '1'));
    const outcome = await stores.transaction(async (tx) => {
      const result = await tx.accounts.createAccount(account(b, '1'));
      // The transaction is still usable afterwards (PostgreSQL aborts it on a raised violation).
      expect(await tx.accounts.findAccount('github', '1')).toMatchObject({ userId: a });
      return result;
    });
    expect(outcome).toBe('already_linked');
    expect(await stores.accounts.createAccount({ ...account(b, '1'), provider: 'gitlab' })).toBe('created');
  });

  test('updateAccountTokens replaces the token fields, login, scope and updatedAt', async () => {
    const userId = await newUser();
    const linked = account(userId, '7');
    await stores.accounts.createAccount(linked);
    const later = new Date(now.getTime() + 5000);
    await stores.accounts.updateAccountTokens(linked.id, {
      providerLogin: 'renamed',
      accessTokenEnc: 'v1.k.iv.ct2.tag',
      refreshTokenEnc: 'v1.k.iv.rt.tag',
      accessTokenExpiresAt: null,
      scope: 'read:user',
      updatedAt: later,
    });
    expect(await stores.accounts.findAccount('github', '7')).toEqual({
      ...linked,
      providerLogin: 'renamed',
      accessTokenEnc: 'v1.k.iv.ct2.tag',
      refreshTokenEnc: 'v1.k.iv.rt.tag',
      accessTokenExpiresAt: null,
      scope: 'read:user',
      updatedAt: later,
    });
  });

  test("deleteUserAccounts unlinks every provider of that user, and no one else's; returns how many", async () => {
    const [a, b] = [await newUser(), await newUser()];
    await stores.accounts.createAccount(account(a, '11'));
    await stores.accounts.createAccount({ ...account(a, '12'), provider: 'gitlab' });
    const kept = account(b, '13');
    await stores.accounts.createAccount(kept);
    expect(await stores.accounts.deleteUserAccounts(a)).toBe(2);
    expect(await stores.accounts.listUserAccounts(a)).toEqual([]);
    expect(await stores.accounts.listUserAccounts(b)).toEqual([kept]);
    expect(await stores.accounts.deleteUserAccounts(a)).toBe(0);
  });

  test('deleting a user deletes its links (foreign key cascade)', async () => {
    const userId = await newUser();
    await stores.accounts.createAccount(account(userId, '9'));
    await database.kysely.deleteFrom('users').where('id', '=', userId).execute();
    expect(await stores.accounts.findAccount('github', '9')).toBeNull();
  });

  test('users: removePassword and markEmailVerified', async () => {
    const userId = await newUser();
    await stores.users.removePassword(userId);
    await stores.users.markEmailVerified(userId);
    expect(await stores.users.findUserById(userId)).toMatchObject({ passwordHash: null, emailVerified: true });
  });
});
