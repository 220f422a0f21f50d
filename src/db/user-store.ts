/** @module UserStore over Kysely. */
import type { Kysely, Selectable } from 'kysely';
import { languageOf, type NewUser, type User, type UserStore } from '../users/user.js';
import { isUniqueViolation } from './errors.js';
import type { Database, UsersTable } from './schema.js';

/** The session check selects the user's columns but `external_id`, which no flow reads. */
export function toUser(row: Omit<Selectable<UsersTable>, 'external_id'>): User {
  return {
    id: row.id,
    email: row.email,
    emailVerified: row.email_verified === 1,
    passwordHash: row.password_hash,
    createdAt: new Date(row.created_at),
    lastLoginAt: row.last_login_at === null ? null : new Date(row.last_login_at),
    disabledAt: row.disabled_at === null ? null : new Date(row.disabled_at),
    passwordUnproven: row.password_unproven === 1,
    language: languageOf(row.language),
  };
}

/** UserStore.setLanguage, outside createUserStore to keep that function within bounds. */
function languageSetter(db: Kysely<Database>): UserStore['setLanguage'] {
  return async (userId, language) => {
    await db.updateTable('users').set({ language }).where('id', '=', userId).execute();
  };
}

export function createUserStore(db: Kysely<Database>, dialect: 'sqlite' | 'postgres'): UserStore {
  return {
    async findUserById(id) {
      const row = await db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst();
      return row ? toUser(row) : null;
    },

    async findUserByEmail(email) {
      const row = await db.selectFrom('users').selectAll().where('email', '=', email.toLowerCase()).executeTakeFirst();
      return row ? toUser(row) : null;
    },

    async createUser(user: NewUser) {
      try {
        await db
          .insertInto('users')
          .values({
            id: user.id,
            email: user.email?.toLowerCase() ?? null,
            password_hash: user.passwordHash,
            email_verified: user.emailVerified ? 1 : 0,
            // Whoever chooses a password for an address not proved yet may not own it.
            password_unproven: user.passwordHash !== null && !user.emailVerified ? 1 : 0,
            preferences: '{}',
            created_at: user.createdAt.getTime(),
            last_login_at: null,
            language: user.language ?? null,
          })
          .execute();
        return 'created';
      } catch (error) {
        if (isUniqueViolation(error)) return 'email_taken';
        throw error;
      }
    },

    async recordLogin(userId, at) {
      await db.updateTable('users').set({ last_login_at: at.getTime() }).where('id', '=', userId).execute();
    },

    setLanguage: languageSetter(db),

    async setPassword(userId, passwordHash) {
      await db.updateTable('users').set({ password_hash: passwordHash }).where('id', '=', userId).execute();
    },

    async rehashPassword(userId, previousHash, passwordHash) {
      const result = await db
        .updateTable('users')
        .set({ password_hash: passwordHash })
        .where('id', '=', userId)
        .where('password_hash', '=', previousHash)
        .executeTakeFirst();
      return Number(result.numUpdatedRows) === 1;
    },

    async removePassword(userId) {
      await db.updateTable('users').set({ password_hash: null }).where('id', '=', userId).execute();
    },

    async markCredentialsUnproven(userId) {
      await db.updateTable('users').set({ password_unproven: 1 }).where('id', '=', userId).execute();
    },

    async markEmailVerified(userId, { passwordProven } = { passwordProven: true }) {
      await db
        .updateTable('users')
        .set(passwordProven ? { email_verified: 1, password_unproven: 0 } : { email_verified: 1 })
        .where('id', '=', userId)
        .execute();
    },

    async changeEmail(userId, email) {
      try {
        await db.updateTable('users').set({ email: email.toLowerCase(), email_verified: 1 }).where('id', '=', userId).execute();
        return 'changed';
      } catch (error) {
        if (isUniqueViolation(error)) return 'email_taken';
        throw error;
      }
    },

    async lockUser(userId) {
      if (dialect === 'postgres') await db.selectFrom('users').select('id').where('id', '=', userId).forUpdate().execute();
    },

    setDisabledAt: (userId, at) => setDisabledAt(db, userId, at),

    async deleteUser(userId) {
      const result = await db.deleteFrom('users').where('id', '=', userId).executeTakeFirst();
      return Number(result.numDeletedRows) > 0;
    },
  };
}

async function setDisabledAt(db: Kysely<Database>, userId: string, at: Date | null): Promise<boolean> {
  const result = await db
    .updateTable('users')
    .set({ disabled_at: at === null ? null : at.getTime() })
    .where('id', '=', userId)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}
