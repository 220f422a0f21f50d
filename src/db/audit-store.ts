/** @module AuditStore over Kysely. */
import { CompiledQuery, type Insertable, type Kysely } from 'kysely';
import type { AuditEvent, AuditMetadata, AuditStore } from '../audit/audit-log.js';
import type { AuditEventsTable, Database } from './schema.js';
import { keepPrepared } from './prepared-statements.js';
import { createWriteBatcher } from './write-batcher.js';

// Column widths from the migration: an over-long header is cut, never refused.
const MAX_USER_AGENT = 512;
const MAX_IP = 64;
/** Metadata fields that hold an email address (password flows, email change). */
const ADDRESS_FIELDS = new Set(['email', 'newEmail', 'previousEmail']);

/** Rows per INSERT: 6 parameters each stays far below SQLite's and PostgreSQL's limits. */
const MAX_ROWS_PER_INSERT = 500;

function toRow(event: AuditEvent): Insertable<AuditEventsTable> {
  return {
    event_type: event.type,
    user_id: event.userId,
    ip: event.ip?.slice(0, MAX_IP) ?? null,
    user_agent: event.userAgent?.slice(0, MAX_USER_AGENT) ?? null,
    metadata: JSON.stringify(event.metadata),
    created_at: event.at.getTime(),
  };
}

/**
 * PostgreSQL: a batch of any size is one statement of fixed text, each column an array, run as a
 * named prepared statement (prepared-statements.ts): nothing to build or parse per batch. A
 * multi-row VALUES would be a new statement text for every batch size.
 */
const POSTGRES_COLUMNS = [
  ['event_type', 'varchar'],
  ['user_id', 'varchar'],
  ['ip', 'varchar'],
  ['user_agent', 'varchar'],
  ['metadata', 'text'],
  ['created_at', 'bigint'],
] as const;
const INSERT_ROWS_POSTGRES = keepPrepared(
  `insert into audit_events (${POSTGRES_COLUMNS.map(([column]) => column).join(', ')}) ` +
    `select * from unnest(${POSTGRES_COLUMNS.map(([, type], index) => `$${index + 1}::${type}[]`).join(', ')})`,
);

export interface AuditStoreOptions {
  /**
   * Events recorded together are written by one INSERT (write-batcher.ts: those of one turn of
   * the event loop, or all that arrive while an INSERT is in flight); each caller still waits
   * until its row is stored. Not inside a
   * transaction, whose rows must commit or roll back with it.
   */
  batchWrites?: boolean;
}

export function createAuditStore(db: Kysely<Database>, dialect: 'sqlite' | 'postgres', options: AuditStoreOptions = {}): AuditStore {
  const insertRows =
    dialect === 'postgres'
      ? async (rows: readonly Insertable<AuditEventsTable>[]): Promise<void> => {
          // One array per column, in the statement's order.
          const columns = POSTGRES_COLUMNS.map(([column]) => rows.map((row) => row[column]));
          await db.executeQuery(CompiledQuery.raw(INSERT_ROWS_POSTGRES, columns));
        }
      : async (rows: readonly Insertable<AuditEventsTable>[]): Promise<void> => {
          await db.insertInto('audit_events').values(rows).execute();
        };
  const batcher = options.batchWrites ? createWriteBatcher(insertRows, MAX_ROWS_PER_INSERT) : null;
  return {
    async recordEvent(event) {
      const row = toRow(event);
      await (batcher === null ? insertRows([row]) : batcher.write(row));
    },

    async listRecentEvents(limit) {
      const rows = await db.selectFrom('audit_events').selectAll().orderBy('id', 'desc').limit(limit).execute();
      return rows.map((row) => ({
        type: row.event_type as 'user_created',
        userId: row.user_id,
        ip: row.ip,
        userAgent: row.user_agent,
        metadata: JSON.parse(row.metadata) as AuditMetadata,
        at: new Date(row.created_at),
      }));
    },
    async forgetEmail(userId, email) {
      const rows = await db.selectFrom('audit_events').select(['id', 'metadata']).where('user_id', '=', userId).execute();
      let changed = 0;
      for (const row of rows) {
        const metadata = JSON.parse(row.metadata) as AuditMetadata;
        // The fields that hold an address (any the account had, not only the last), and any value
        // equal to the last one wherever it sits.
        const kept = Object.entries(metadata).filter(
          ([key, value]) => !ADDRESS_FIELDS.has(key) && !(typeof value === 'string' && value.toLowerCase() === email.toLowerCase()),
        );
        if (kept.length === Object.keys(metadata).length) continue;
        await db
          .updateTable('audit_events')
          .set({ metadata: JSON.stringify(Object.fromEntries(kept)) })
          .where('id', '=', row.id)
          .execute();
        changed++;
      }
      return changed;
    },
    async deleteEventsBefore(cutoff) {
      const result = await db.deleteFrom('audit_events').where('created_at', '<', cutoff.getTime()).executeTakeFirst();
      return Number(result.numDeletedRows);
    },
  };
}
