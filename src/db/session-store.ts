/** @module SessionStore over Kysely. */
import { CompiledQuery, type Kysely, type Selectable } from 'kysely';
import type { SessionRecord, SessionStore } from '../session/store.js';
import type { Database, SessionsTable } from './schema.js';
import { toUser } from './user-store.js';

function toSession(row: Selectable<SessionsTable>): SessionRecord {
  return {
    id: row.id,
    userId: row.user_id,
    tokenHash: row.token_hash,
    expiresAt: new Date(row.expires_at),
    createdAt: new Date(row.created_at),
  };
}

type SessionWithUserRow = Awaited<ReturnType<ReturnType<typeof sessionWithUserQuery>['executeTakeFirstOrThrow']>>;

function sessionWithUserQuery(db: Kysely<Database>, sessionId: string) {
  return db
    .selectFrom('sessions')
    .innerJoin('users', 'users.id', 'sessions.user_id')
    .select([
      'sessions.id as session_id',
      'sessions.user_id',
      'sessions.token_hash',
      'sessions.expires_at',
      'sessions.created_at as session_created_at',
      'users.id',
      'users.email',
      'users.password_hash',
      'users.email_verified',
      'users.preferences',
      'users.created_at',
      'users.last_login_at',
    ])
    .where('sessions.id', '=', sessionId);
}

export function createSessionStore(db: Kysely<Database>): SessionStore {
  // The session check runs on every request of the application behind Gatehouse: its query is
  // built and compiled once, and only the session id changes (its one parameter).
  const sessionWithUserSql = sessionWithUserQuery(db, '').compile().sql;
  return {
    async createSession(session) {
      await db
        .insertInto('sessions')
        .values({
          id: session.id,
          user_id: session.userId,
          token_hash: session.tokenHash,
          expires_at: session.expiresAt.getTime(),
          created_at: session.createdAt.getTime(),
        })
        .execute();
    },

    async findSessionWithUser(sessionId) {
      const { rows } = await db.executeQuery<SessionWithUserRow>(CompiledQuery.raw(sessionWithUserSql, [sessionId]));
      const row = rows[0];
      if (!row) return null;
      return {
        session: toSession({
          id: row.session_id,
          user_id: row.user_id,
          token_hash: row.token_hash,
          expires_at: row.expires_at,
          created_at: row.session_created_at,
        }),
        user: toUser(row),
      };
    },

    async deleteSession(sessionId) {
      await db.deleteFrom('sessions').where('id', '=', sessionId).execute();
    },

    async deleteUserSessions(userId) {
      const result = await db.deleteFrom('sessions').where('user_id', '=', userId).executeTakeFirst();
      return Number(result.numDeletedRows);
    },

    async deleteExpiredSessions(now) {
      const result = await db.deleteFrom('sessions').where('expires_at', '<=', now.getTime()).executeTakeFirst();
      return Number(result.numDeletedRows);
    },
  };
}
