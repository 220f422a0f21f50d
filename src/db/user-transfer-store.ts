/** @module TransferStore over Kysely: bulk reads and writes for user import, pages for export, one person's data. */
import type { Kysely } from 'kysely';
import type { ExistingUser, ExportedUserRow, NewProviderLink, OwnData, ProviderLink, TransferStore } from '../user-transfer/store.js';
import { enqueueLogoutNotices } from './oidc-logout-store.js';
import { revokeAppAccess } from './oidc-record-store.js';
import type { Database } from './schema.js';
import { createWebhookEventStore } from './webhook-event-store.js';

const ms = (value: number | null): Date | null => (value === null ? null : new Date(Number(value)));

export function createTransferStore(db: Kysely<Database>): TransferStore {
  return {
    transaction: (work) => db.transaction().execute((tx) => work(createTransferStore(tx))),
    ...importMethods(db),
    exportPage: (afterId, limit) => exportPage(db, afterId, limit),
    ownData: (userId, now) => ownData(db, userId, now),
    webhookEvents: createWebhookEventStore(db),
    appAccess: { notifyLogout: async (accountId, now) => void (await enqueueLogoutNotices(db, accountId, now)) },
  };
}

/** The reads and bulk writes of an import batch. */
function importMethods(db: Kysely<Database>): Omit<TransferStore, 'transaction' | 'exportPage' | 'ownData' | 'webhookEvents' | 'appAccess'> {
  return {
    async findUsers(emails, externalIds) {
      if (emails.length === 0 && externalIds.length === 0) return [];
      const rows = await db
        .selectFrom('users')
        .select(['id', 'email', 'external_id', 'disabled_at'])
        .where((eb) => {
          const either = [];
          if (emails.length > 0) either.push(eb('email', 'in', [...emails]));
          if (externalIds.length > 0) either.push(eb('external_id', 'in', [...externalIds]));
          return eb.or(either);
        })
        .execute();
      return rows.map((row): ExistingUser => ({ id: row.id, email: row.email, externalId: row.external_id, disabledAt: ms(row.disabled_at) }));
    },

    async findLinkOwners(links) {
      if (links.length === 0) return [];
      const ids = [...new Set(links.map((link) => link.providerUserId))];
      const rows = await db
        .selectFrom('accounts')
        .select(['user_id', 'provider', 'provider_account_id', 'provider_login'])
        .where('provider_account_id', 'in', ids)
        .execute();
      return rows.map((row) => ({ userId: row.user_id, provider: row.provider, providerUserId: row.provider_account_id, login: row.provider_login }));
    },

    async insertUsers(users) {
      if (users.length === 0) return;
      await db
        .insertInto('users')
        .values(
          users.map((user) => ({
            id: user.id,
            email: user.email,
            password_hash: user.passwordHash,
            email_verified: user.emailVerified ? 1 : 0,
            // As at registration: a password set for an address nobody proved may not be its owner's.
            password_unproven: user.passwordHash !== null && !user.emailVerified ? 1 : 0,
            preferences: '{}',
            created_at: user.createdAt.getTime(),
            last_login_at: null,
            disabled_at: user.disabledAt?.getTime() ?? null,
            external_id: user.externalId,
          })),
        )
        .execute();
    },

    async updateUser(userId, update) {
      const changes = {
        ...(update.email !== undefined ? { email: update.email } : {}),
        ...(update.emailVerified !== undefined ? { email_verified: update.emailVerified ? 1 : 0 } : {}),
        ...(update.passwordHash !== undefined ? { password_hash: update.passwordHash } : {}),
        ...(update.createdAt !== undefined ? { created_at: update.createdAt.getTime() } : {}),
        ...(update.externalId !== undefined ? { external_id: update.externalId } : {}),
        ...(update.disabledAt !== undefined ? { disabled_at: update.disabledAt?.getTime() ?? null } : {}),
      };
      // A line that only adds provider sign-ins changes no column: an UPDATE with an empty SET is not SQL.
      if (Object.keys(changes).length === 0) return;
      await db.updateTable('users').set(changes).where('id', '=', userId).execute();
    },

    insertLinks: (links) => insertLinks(db, links),

    async deleteSessions(userId, now) {
      const rows = await db.deleteFrom('sessions').where('user_id', '=', userId).returning('id').execute();
      await enqueueLogoutNotices(db, userId, now);
      await revokeAppAccess(db, userId);
      return rows.map((row) => row.id);
    },
  };
}

async function insertLinks(db: Kysely<Database>, links: readonly NewProviderLink[]): Promise<void> {
  if (links.length === 0) return;
  await db
    .insertInto('accounts')
    .values(
      links.map((link) => ({
        id: link.id,
        user_id: link.userId,
        provider: link.provider,
        provider_account_id: link.providerUserId,
        provider_login: link.login,
        // No provider token comes with an import: the next sign-in through the provider stores one.
        access_token_enc: '',
        refresh_token_enc: null,
        access_token_expires_at: null,
        scope: '',
        created_at: link.createdAt.getTime(),
        updated_at: link.createdAt.getTime(),
      })),
    )
    .execute();
}

async function exportPage(db: Kysely<Database>, afterId: string | null, limit: number): Promise<ExportedUserRow[]> {
  let query = db
    .selectFrom('users')
    .select(['id', 'email', 'email_verified', 'password_hash', 'created_at', 'external_id', 'disabled_at'])
    .orderBy('id')
    .limit(limit);
  if (afterId !== null) query = query.where('id', '>', afterId);
  const rows = await query.execute();
  const links = new Map<string, ProviderLink[]>();
  if (rows.length > 0) {
    const accounts = await db
      .selectFrom('accounts')
      .select(['user_id', 'provider', 'provider_account_id', 'provider_login'])
      .where(
        'user_id',
        'in',
        rows.map((row) => row.id),
      )
      .orderBy('created_at')
      .execute();
    for (const account of accounts) {
      const list = links.get(account.user_id) ?? [];
      list.push({ provider: account.provider, providerUserId: account.provider_account_id, login: account.provider_login });
      links.set(account.user_id, list);
    }
  }
  return rows.map((row): ExportedUserRow => ({
    id: row.id,
    email: row.email,
    emailVerified: row.email_verified === 1,
    passwordHash: row.password_hash,
    createdAt: new Date(Number(row.created_at)),
    externalId: row.external_id,
    disabledAt: ms(row.disabled_at),
    providers: links.get(row.id) ?? [],
  }));
}

async function ownData(db: Kysely<Database>, userId: string, now: Date): Promise<OwnData> {
  const [sessions, accounts, passkeys, totp, codes, events] = await Promise.all([
    db
      .selectFrom('sessions')
      .select(['id', 'created_at', 'expires_at', 'last_seen_at', 'ip', 'user_agent', 'methods'])
      .where('user_id', '=', userId)
      .where('expires_at', '>', now.getTime())
      .orderBy('created_at')
      .execute(),
    db.selectFrom('accounts').select(['provider', 'provider_login', 'created_at']).where('user_id', '=', userId).orderBy('created_at').execute(),
    db.selectFrom('passkeys').select(['name', 'created_at', 'last_used_at']).where('user_id', '=', userId).orderBy('created_at').execute(),
    db.selectFrom('user_totp').select(['enabled_at']).where('user_id', '=', userId).executeTakeFirst(),
    db
      .selectFrom('recovery_codes')
      .select((eb) => eb.fn.countAll<number>().as('left'))
      .where('user_id', '=', userId)
      .where('used_at', 'is', null)
      .executeTakeFirst(),
    db.selectFrom('audit_events').select(['event_type', 'created_at', 'ip', 'user_agent', 'metadata']).where('user_id', '=', userId).orderBy('id').execute(),
  ]);
  const enabledAt = ms(totp?.enabled_at ?? null);
  return {
    sessions: sessions.map((row) => ({
      id: row.id,
      createdAt: new Date(Number(row.created_at)),
      expiresAt: new Date(Number(row.expires_at)),
      lastSeenAt: ms(row.last_seen_at),
      ip: row.ip,
      userAgent: row.user_agent,
      methods: row.methods,
    })),
    linkedSignIns: accounts.map((row) => ({ provider: row.provider, login: row.provider_login, linkedAt: new Date(Number(row.created_at)) })),
    passkeys: passkeys.map((row) => ({ name: row.name, createdAt: new Date(Number(row.created_at)), lastUsedAt: ms(row.last_used_at) })),
    twoFactor: { enabled: enabledAt !== null, enabledAt, recoveryCodesLeft: enabledAt === null ? 0 : Number(codes?.left ?? 0) },
    auditEvents: events.map((row) => ({
      type: row.event_type,
      at: new Date(Number(row.created_at)),
      ip: row.ip,
      userAgent: row.user_agent,
      metadata: JSON.parse(row.metadata) as Record<string, unknown>,
    })),
  };
}
