/** @module AdminStore over Kysely: the operators' reads (src/admin/). */
import { sql, type Kysely } from 'kysely';
import type { AdminStore } from '../admin/store.js';
import type { AuditEventType, AuditMetadata } from '../audit/audit-log.js';
import type { Database } from './schema.js';
import { toUser } from './user-store.js';

/** `%`, `_` and the escape character itself match literally in a LIKE pattern. */
function likeContaining(text: string): string {
  return `%${text.replace(/[\\%_]/g, (char) => `\\${char}`)}%`;
}

export function createAdminStore(db: Kysely<Database>): AdminStore {
  return { ...userMethods(db), ...auditMethods(db) };
}

/** The operators' view of users: search, what each has set up, disabling. */
function userMethods(db: Kysely<Database>): Pick<AdminStore, 'searchUsers' | 'userOverview'> {
  return {
    async searchUsers({ query, limit, after }) {
      let select = db.selectFrom('users').selectAll();
      if (query !== null) {
        // Emails are stored lower-cased, and the query arrives lower-cased: LIKE's case rules
        // (case-insensitive on SQLite for ASCII, sensitive on PostgreSQL) cannot differ.
        // ESCAPE named on both: SQLite has no default escape character.
        const pattern = likeContaining(query);
        select = select.where((eb) => eb.or([sql<boolean>`${eb.ref('email')} like ${pattern} escape '\\'`, eb('id', '=', query)]));
      }
      if (after !== null) {
        select = select.where((eb) =>
          eb.or([eb('created_at', '>', after.createdAt), eb.and([eb('created_at', '=', after.createdAt), eb('id', '>', after.id)])]),
        );
      }
      const rows = await select
        .orderBy('created_at')
        .orderBy('id')
        .limit(limit + 1)
        .execute();
      return rows.map(toUser);
    },

    async userOverview(userId, now) {
      const [sessions, accounts, totp, codes, passkeys] = await Promise.all([
        db
          .selectFrom('sessions')
          .select((eb) => eb.fn.countAll<number | string | bigint>().as('count'))
          .where('user_id', '=', userId)
          .where('expires_at', '>', now.getTime())
          .executeTakeFirstOrThrow(),
        db.selectFrom('accounts').select(['provider', 'provider_login', 'created_at']).where('user_id', '=', userId).orderBy('created_at').execute(),
        db.selectFrom('user_totp').select('enabled_at').where('user_id', '=', userId).executeTakeFirst(),
        db
          .selectFrom('recovery_codes')
          .select((eb) => eb.fn.countAll<number | string | bigint>().as('count'))
          .where('user_id', '=', userId)
          .where('used_at', 'is', null)
          .executeTakeFirstOrThrow(),
        db
          .selectFrom('passkeys')
          .select((eb) => eb.fn.countAll<number | string | bigint>().as('count'))
          .where('user_id', '=', userId)
          .executeTakeFirstOrThrow(),
      ]);
      const twoFactorEnabled = totp !== undefined && totp.enabled_at !== null;
      return {
        sessions: Number(sessions.count),
        providers: accounts.map((row) => ({ provider: row.provider, login: row.provider_login, linkedAt: new Date(Number(row.created_at)) })),
        twoFactorEnabled,
        recoveryCodesLeft: twoFactorEnabled ? Number(codes.count) : 0,
        passkeys: Number(passkeys.count),
      };
    },
  };
}

/** The operators' read of the audit log. */
function auditMethods(db: Kysely<Database>): Pick<AdminStore, 'searchAuditEvents'> {
  return {
    async searchAuditEvents({ userId, type, since, until, limit, beforeId }) {
      let select = db.selectFrom('audit_events').selectAll();
      if (userId !== null) select = select.where('user_id', '=', userId);
      if (type !== null) select = select.where('event_type', '=', type);
      if (since !== null) select = select.where('created_at', '>=', since);
      if (until !== null) select = select.where('created_at', '<=', until);
      if (beforeId !== null) select = select.where('id', '<', beforeId);
      const rows = await select
        .orderBy('id', 'desc')
        .limit(limit + 1)
        .execute();
      return rows.map((row) => ({
        id: Number(row.id),
        type: row.event_type as AuditEventType,
        userId: row.user_id,
        ip: row.ip,
        userAgent: row.user_agent,
        metadata: JSON.parse(row.metadata) as AuditMetadata,
        at: new Date(Number(row.created_at)),
      }));
    },
  };
}
