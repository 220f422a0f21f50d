/** @module SessionStore over Kysely. */
import DataLoader from 'dataloader';
import { CompiledQuery, sql, type Kysely, type Selectable } from 'kysely';
import type { SessionRecord, SessionStore } from '../session/store.js';
import { keepPrepared } from './prepared-statements.js';
import type { Database, SessionsTable } from './schema.js';
import { toUser } from './user-store.js';

function toSession(row: Selectable<SessionsTable>): SessionRecord {
  return {
    id: row.id,
    userId: row.user_id,
    tokenHash: row.token_hash,
    expiresAt: new Date(row.expires_at),
    createdAt: new Date(row.created_at),
    ip: row.ip,
    userAgent: row.user_agent,
    lastSeenAt: new Date(row.last_seen_at ?? row.created_at),
    methods: row.methods === '' ? [] : row.methods.split(','),
  };
}

// Column widths from migration 007: an over-long header is cut, never refused.
const MAX_IP = 64;
const MAX_USER_AGENT = 512;

type SessionWithUserRow = Awaited<ReturnType<ReturnType<typeof sessionWithUserSelect>['executeTakeFirstOrThrow']>>;
type SessionWithUser = NonNullable<Awaited<ReturnType<SessionStore['findSessionWithUser']>>>;

function sessionWithUserSelect(db: Kysely<Database>) {
  return db
    .selectFrom('sessions')
    .innerJoin('users', 'users.id', 'sessions.user_id')
    .select([
      'sessions.id as session_id',
      'sessions.user_id',
      'sessions.token_hash',
      'sessions.expires_at',
      'sessions.created_at as session_created_at',
      'sessions.last_seen_at as session_last_seen_at',
      'sessions.methods as session_methods',
      'users.id',
      'users.email',
      'users.password_hash',
      'users.email_verified',
      'users.preferences',
      'users.created_at',
      'users.last_login_at',
      'users.disabled_at',
      'users.password_unproven',
      'users.language',
    ]);
}

/**
 * INSERT … SELECT from the user's row: no session for a missing or disabled user, decided in the
 * same statement (an operator's disable cannot slip between a check and the insert). The numbers
 * are cast: PostgreSQL types a bare parameter in a select list as text. Its parameters, in order:
 * id, token hash, expiry, creation, ip, user agent, last seen, methods, user id.
 */
function createSessionQuery(db: Kysely<Database>) {
  return db
    .insertInto('sessions')
    .columns(['id', 'user_id', 'token_hash', 'expires_at', 'created_at', 'ip', 'user_agent', 'last_seen_at', 'methods'])
    .expression(
      db
        .selectFrom('users')
        .select([
          sql<string>`${''}`.as('id'),
          'users.id as user_id',
          sql<string>`${''}`.as('token_hash'),
          sql<number>`cast(${0} as bigint)`.as('expires_at'),
          sql<number>`cast(${0} as bigint)`.as('created_at'),
          sql<string | null>`cast(${null} as varchar(64))`.as('ip'),
          sql<string | null>`cast(${null} as varchar(512))`.as('user_agent'),
          sql<number>`cast(${0} as bigint)`.as('last_seen_at'),
          sql<string>`${''}`.as('methods'),
        ])
        .where('users.id', '=', '')
        .where('users.disabled_at', 'is', null),
    );
}

function toSessionWithUser(row: SessionWithUserRow): SessionWithUser {
  // Not the session's IP and user agent: only the session list shows them, and the check
  // runs on every request of the application behind us (DESIGN §10).
  return {
    session: {
      id: row.session_id,
      userId: row.user_id,
      tokenHash: row.token_hash,
      expiresAt: new Date(row.expires_at),
      createdAt: new Date(row.session_created_at),
      lastSeenAt: new Date(row.session_last_seen_at ?? row.session_created_at),
      methods: row.session_methods === '' ? [] : row.session_methods.split(','),
    },
    user: toUser(row),
  };
}

export interface SessionStoreOptions {
  /**
   * Session checks that arrive together are answered by one query (PostgreSQL): each lookup
   * still reads its row when it is asked, so a revoked session is refused at once, but the
   * round trip, its system calls and the database's work are shared by every check waiting in
   * the same turn of the event loop. Not inside a transaction, where a lookup must see its own
   * writes. docs/performance.md has the figures.
   */
  batchLookups?: boolean;
}

export function createSessionStore(db: Kysely<Database>, options: SessionStoreOptions = {}): SessionStore {
  // The session check runs on every request of the application behind Gatehouse: its query is
  // built and compiled once, and only the session id changes (its one parameter); on PostgreSQL
  // the checks arriving together share one prepared query (batchedLookup). The insert of every
  // sign-in (createSessionQuery) is compiled once too, with its nine.
  const createSessionSql = createSessionQuery(db).compile().sql;
  const sessionWithUserSql = sessionWithUserSelect(db).where('sessions.id', '=', '').compile().sql;
  const findOne = async (sessionId: string): Promise<SessionWithUser | null> => {
    const { rows } = await db.executeQuery<SessionWithUserRow>(CompiledQuery.raw(sessionWithUserSql, [sessionId]));
    return rows[0] ? toSessionWithUser(rows[0]) : null;
  };
  const findSessionWithUser = options.batchLookups ? batchedLookup(db) : findOne;
  return {
    async createSession(session) {
      const params = [
        session.id,
        session.tokenHash,
        session.expiresAt.getTime(),
        session.createdAt.getTime(),
        session.ip?.slice(0, MAX_IP) ?? null,
        session.userAgent?.slice(0, MAX_USER_AGENT) ?? null,
        session.createdAt.getTime(),
        session.methods.join(','),
        session.userId,
      ];
      const result = await db.executeQuery(CompiledQuery.raw(createSessionSql, params));
      return Number(result.numAffectedRows ?? 0) === 1;
    },

    findSessionWithUser,

    async deleteSession(sessionId) {
      await db.deleteFrom('sessions').where('id', '=', sessionId).execute();
    },

    async listUserSessions(userId, now) {
      const rows = await db
        .selectFrom('sessions')
        .selectAll()
        .where('user_id', '=', userId)
        .where('expires_at', '>', now.getTime())
        .orderBy('created_at', 'desc')
        .orderBy('id')
        .execute();
      return rows.map(toSession);
    },

    async touchSession(sessionId, now, minIntervalMs) {
      await db
        .updateTable('sessions')
        .set({ last_seen_at: now.getTime() })
        .where('id', '=', sessionId)
        .where((eb) => eb.or([eb('last_seen_at', 'is', null), eb('last_seen_at', '<=', now.getTime() - minIntervalMs)]))
        .execute();
    },

    async deleteUserSession(userId, sessionId) {
      const result = await db.deleteFrom('sessions').where('id', '=', sessionId).where('user_id', '=', userId).executeTakeFirst();
      return Number(result.numDeletedRows) === 1;
    },

    async deleteUserSessionsReturningIds(userId, keepSessionId) {
      let query = db.deleteFrom('sessions').where('user_id', '=', userId);
      if (keepSessionId !== null) query = query.where('id', '!=', keepSessionId);
      // RETURNING on both dialects (SQLite 3.35+): the ids come from the delete itself, not a read before it.
      const rows = await query.returning('id').execute();
      return rows.map((row) => row.id);
    },

    async deleteExpiredSessions(now) {
      const result = await db.deleteFrom('sessions').where('expires_at', '<=', now.getTime()).executeTakeFirst();
      return Number(result.numDeletedRows);
    },
  };
}

/**
 * One query per batch of session ids: those asked for in the same turn of the event loop (the
 * batch is sent from setImmediate, after every request that arrived in that turn has asked).
 * DataLoader's cache is off: every check reads the row as it is now.
 */
function batchedLookup(db: Kysely<Database>): (sessionId: string) => Promise<SessionWithUser | null> {
  const batchSql = keepPrepared(
    sessionWithUserSelect(db)
      .where('sessions.id', '=', (eb) => eb.fn<string>('any', [eb.val([] as string[])]))
      .compile().sql,
  );
  const loader = new DataLoader<string, SessionWithUser | null>(
    async (sessionIds) => {
      const { rows } = await db.executeQuery<SessionWithUserRow>(CompiledQuery.raw(batchSql, [sessionIds]));
      const found = new Map(rows.map((row) => [row.session_id, row]));
      return sessionIds.map((id) => {
        const row = found.get(id);
        return row === undefined ? null : toSessionWithUser(row);
      });
    },
    { cache: false, batchScheduleFn: (send) => setImmediate(send), maxBatchSize: 100 },
  );
  return (sessionId) => loader.load(sessionId);
}
