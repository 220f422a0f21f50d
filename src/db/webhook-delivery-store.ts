/**
 * @module The webhook deliveries over Kysely: the operators' list, a retry by hand, and the
 * worker's side — claiming due deliveries, recording each attempt, sweeping finished events.
 *
 * - A claim is one UPDATE … WHERE seq IN (SELECT …) statement, as the outbox claims its emails:
 *   atomic on SQLite (one writer); on PostgreSQL `FOR UPDATE OF d SKIP LOCKED` lets several
 *   workers take disjoint deliveries without waiting, and locks no endpoint row.
 * - A claimed delivery stays `pending` while it is held, so a later delivery of the same endpoint
 *   and user keeps waiting behind it (one user's events in order, DESIGN §11.2).
 * - Recording an attempt is conditional on the claim id: a worker whose lease ran out (and whose
 *   delivery another worker re-claimed) records nothing, so no attempt is counted twice.
 */
import { randomUUID } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import type { ClaimedDelivery, DeliveryAttempt, DeliveryStatus, WebhookDelivery, WebhookDeliveryStore, WebhookDispatchStore } from '../webhooks/store.js';
import type { Database } from './schema.js';

/** The attempts table's column width. */
export const MAX_ATTEMPT_ERROR_LENGTH = 500;
/** An endpoint whose failures began this long before a failed attempt is disabled by it. */
export const ENDPOINT_FAILING_LIMIT_MS = 5 * 24 * 60 * 60 * 1000;
/** Events are swept in batches of this many, so one statement never holds the tables for long. */
export const SWEEP_BATCH_SIZE = 1000;

export type WebhookDeliveryStoreWithDispatch = WebhookDeliveryStore & WebhookDispatchStore;

export function createWebhookDeliveryStore(db: Kysely<Database>, dialect: 'sqlite' | 'postgres'): WebhookDeliveryStoreWithDispatch {
  return { ...listMethods(db), ...claimMethods(db, dialect), ...recordMethods(db), ...housekeepingMethods(db) };
}

/**
 * The backlog for the metrics: pending deliveries already due, and the oldest one's creation.
 * Served by the (status, next_attempt_at) index.
 */
export async function queryWebhookBacklog(db: Kysely<Database>, now: Date): Promise<{ count: number; oldestCreatedAt: Date | null }> {
  const row = await db
    .selectFrom('webhook_deliveries')
    .select((eb) => [eb.fn.countAll<string | number>().as('count'), eb.fn.min('created_at').as('oldest')])
    .where('status', '=', 'pending')
    .where('next_attempt_at', '<=', now.getTime())
    .executeTakeFirst();
  const oldest = row?.oldest ?? null;
  return { count: Number(row?.count ?? 0), oldestCreatedAt: oldest === null ? null : new Date(Number(oldest)) };
}

interface DeliveryRow {
  seq: number;
  id: string;
  event_id: string;
  type: string;
  status: string;
  next_attempt_at: number | string | null;
  created_at: number | string;
}

const DELIVERY_COLUMNS = ['d.seq', 'd.id', 'd.event_id', 'e.type', 'd.status', 'd.next_attempt_at', 'd.created_at'] as const;

/** A cursor is the last seq shown, in decimal; anything else names no position. */
const CURSOR = /^[1-9][0-9]{0,14}$/;

function listMethods(db: Kysely<Database>): WebhookDeliveryStore {
  const withAttempts = async (rows: DeliveryRow[]): Promise<WebhookDelivery[]> => {
    if (rows.length === 0) return [];
    const attempts = await db
      .selectFrom('webhook_delivery_attempts')
      .select(['delivery_id', 'at', 'status_code', 'duration_ms', 'error'])
      .where(
        'delivery_id',
        'in',
        rows.map((row) => row.id),
      )
      .orderBy('id')
      .execute();
    const byDelivery = new Map<string, DeliveryAttempt[]>();
    for (const a of attempts) {
      const list = byDelivery.get(a.delivery_id) ?? [];
      list.push({ at: new Date(Number(a.at)), statusCode: a.status_code, durationMs: a.duration_ms, error: a.error });
      byDelivery.set(a.delivery_id, list);
    }
    return rows.map((row) => toDelivery(row, byDelivery.get(row.id) ?? []));
  };

  const endpointExists = async (endpointId: string): Promise<boolean> =>
    (await db.selectFrom('webhook_endpoints').select('id').where('id', '=', endpointId).executeTakeFirst()) !== undefined;

  return {
    async listDeliveries(endpointId, query) {
      if (!(await endpointExists(endpointId))) return null;
      if (query.cursor !== null && !CURSOR.test(query.cursor)) return { deliveries: [], nextCursor: null };
      const limit = Math.max(1, Math.floor(query.limit));
      let select = db
        .selectFrom('webhook_deliveries as d')
        .innerJoin('webhook_events as e', 'e.id', 'd.event_id')
        .select(DELIVERY_COLUMNS)
        .where('d.endpoint_id', '=', endpointId);
      if (query.status !== null) select = select.where('d.status', '=', query.status);
      if (query.cursor !== null) select = select.where('d.seq', '<', Number(query.cursor));
      const rows = await select
        .orderBy('d.seq', 'desc')
        .limit(limit + 1)
        .execute();
      const page = rows.slice(0, limit);
      const last = page.at(-1);
      return { deliveries: await withAttempts(page), nextCursor: rows.length > limit && last !== undefined ? String(last.seq) : null };
    },

    async retryDelivery(endpointId, deliveryId, now) {
      const row = await db
        .selectFrom('webhook_deliveries')
        .select('status')
        .where('id', '=', deliveryId)
        .where('endpoint_id', '=', endpointId)
        .executeTakeFirst();
      if (row === undefined) return null;
      if (row.status === 'delivered') return 'delivered';
      // Due now; a claim in flight keeps its lease (its attempt is recorded as usual).
      const result = await db
        .updateTable('webhook_deliveries')
        .set({ status: 'pending', next_attempt_at: now.getTime(), updated_at: now.getTime() })
        .where('id', '=', deliveryId)
        .where('status', '!=', 'delivered')
        .executeTakeFirst();
      return Number(result.numUpdatedRows) > 0 ? 'due' : 'delivered';
    },

    async findDelivery(endpointId, deliveryId) {
      const row = await db
        .selectFrom('webhook_deliveries as d')
        .innerJoin('webhook_events as e', 'e.id', 'd.event_id')
        .select(DELIVERY_COLUMNS)
        .where('d.endpoint_id', '=', endpointId)
        .where('d.id', '=', deliveryId)
        .executeTakeFirst();
      if (row === undefined) return null;
      const [delivery] = await withAttempts([row]);
      return delivery ?? null;
    },
  };
}

function toDelivery(row: DeliveryRow, attempts: DeliveryAttempt[]): WebhookDelivery {
  const status = row.status as DeliveryStatus;
  return {
    id: row.id,
    eventId: row.event_id,
    type: row.type,
    status,
    attempts,
    nextAttemptAt: status === 'pending' && row.next_attempt_at !== null ? new Date(Number(row.next_attempt_at)) : null,
    createdAt: new Date(Number(row.created_at)),
  };
}

function claimMethods(db: Kysely<Database>, dialect: 'sqlite' | 'postgres'): Pick<WebhookDispatchStore, 'claimDueDeliveries'> {
  return {
    async claimDueDeliveries(now, limit, leaseMs) {
      const claimId = randomUUID();
      const nowMs = now.getTime();
      await db
        .updateTable('webhook_deliveries')
        .set({ claim_id: claimId, locked_until: nowMs + leaseMs, updated_at: nowMs })
        .where('seq', 'in', (eb) => {
          const due = eb
            .selectFrom('webhook_deliveries as d')
            .innerJoin('webhook_endpoints as ep', 'ep.id', 'd.endpoint_id')
            .select('d.seq')
            .where('d.status', '=', 'pending')
            .where('d.next_attempt_at', '<=', nowMs)
            .where((w) => w.or([w('d.locked_until', 'is', null), w('d.locked_until', '<=', nowMs)]))
            .where('ep.disabled_at', 'is', null)
            // One user's deliveries to one endpoint go in order: this one waits while an earlier is
            // pending (claimed or not). A null user_id is ordered with nothing.
            .where((w) =>
              w.or([
                w('d.user_id', 'is', null),
                w.not(
                  w.exists(
                    w
                      .selectFrom('webhook_deliveries as p')
                      .select(sql.lit(1).as('one'))
                      .whereRef('p.endpoint_id', '=', 'd.endpoint_id')
                      .whereRef('p.user_id', '=', 'd.user_id')
                      .where('p.status', '=', 'pending')
                      .whereRef('p.seq', '<', 'd.seq'),
                  ),
                ),
              ]),
            )
            // The due index's order (status, next_attempt_at, seq): earliest due first, the walk
            // stops at `limit` (a sort of every due row made a large backlog's drain quadratic).
            .orderBy('d.next_attempt_at')
            .orderBy('d.seq')
            .limit(limit);
          return dialect === 'postgres' ? due.forUpdate(['d']).skipLocked() : due;
        })
        .execute();
      const rows = await db
        .selectFrom('webhook_deliveries as d')
        .innerJoin('webhook_events as e', 'e.id', 'd.event_id')
        .innerJoin('webhook_endpoints as ep', 'ep.id', 'd.endpoint_id')
        .select([
          'd.id',
          'd.endpoint_id',
          'd.attempt_count',
          'e.id as event_id',
          'e.type',
          'e.payload',
          'e.created_at',
          'ep.url',
          'ep.secret_sealed',
          'ep.previous_secret_sealed',
          'ep.previous_secret_until',
          'ep.failing_since',
        ])
        .where('d.claim_id', '=', claimId)
        .orderBy('d.seq')
        .execute();
      return rows.map((row): ClaimedDelivery => ({
        id: row.id,
        claimId,
        endpointId: row.endpoint_id,
        url: row.url,
        secrets: {
          sealed: row.secret_sealed,
          previousSealed: row.previous_secret_sealed,
          previousUntil: row.previous_secret_until === null ? null : new Date(Number(row.previous_secret_until)),
        },
        endpointFailingSince: row.failing_since === null ? null : new Date(Number(row.failing_since)),
        attemptCount: row.attempt_count,
        event: { id: row.event_id, type: row.type, payload: row.payload, createdAt: new Date(Number(row.created_at)) },
      }));
    },
  };
}

function recordMethods(db: Kysely<Database>): Pick<WebhookDispatchStore, 'recordAttempt'> {
  return {
    async recordAttempt(claim, attempt, outcome, now) {
      const nowMs = now.getTime();
      return db.transaction().execute(async (tx) => {
        const updated = await tx
          .updateTable('webhook_deliveries')
          .set((eb) => ({
            status: outcome.status,
            attempt_count: eb('attempt_count', '+', 1),
            next_attempt_at: outcome.status === 'pending' ? outcome.retryAt.getTime() : null,
            claim_id: null,
            locked_until: null,
            updated_at: nowMs,
          }))
          .where('id', '=', claim.id)
          .where('claim_id', '=', claim.claimId)
          .executeTakeFirst();
        if (Number(updated.numUpdatedRows) === 0) return { recorded: false, endpointDisabled: false };
        await tx
          .insertInto('webhook_delivery_attempts')
          .values({
            delivery_id: claim.id,
            at: attempt.at.getTime(),
            status_code: attempt.statusCode,
            duration_ms: Math.max(0, Math.round(attempt.durationMs)),
            error: attempt.error === null ? null : attempt.error.slice(0, MAX_ATTEMPT_ERROR_LENGTH),
          })
          .execute();
        if (outcome.status === 'delivered') {
          await tx
            .updateTable('webhook_endpoints')
            .set({ failing_since: null })
            .where('id', '=', claim.endpointId)
            .where('failing_since', 'is not', null)
            .execute();
          return { recorded: true, endpointDisabled: false };
        }
        return { recorded: true, endpointDisabled: await noteFailure(tx, claim.endpointId, nowMs) };
      });
    },
  };
}

/** Starts the endpoint's failing run if none is running; disables it once the run is 5 days old. */
async function noteFailure(db: Kysely<Database>, endpointId: string, nowMs: number): Promise<boolean> {
  await db.updateTable('webhook_endpoints').set({ failing_since: nowMs }).where('id', '=', endpointId).where('failing_since', 'is', null).execute();
  const disabled = await db
    .updateTable('webhook_endpoints')
    .set({ disabled_at: nowMs, disabled_reason: 'failing', updated_at: nowMs })
    .where('id', '=', endpointId)
    .where('disabled_at', 'is', null)
    .where('failing_since', '<=', nowMs - ENDPOINT_FAILING_LIMIT_MS)
    .executeTakeFirst();
  return Number(disabled.numUpdatedRows) > 0;
}

function housekeepingMethods(db: Kysely<Database>): Pick<WebhookDispatchStore, 'sweepWebhookEvents' | 'webhookBacklog'> {
  return {
    async sweepWebhookEvents(now, olderThanMs) {
      const before = now.getTime() - olderThanMs;
      let total = 0;
      for (;;) {
        // Deliveries and their attempts go by cascade. An event without any delivery left (its
        // endpoint deleted) is finished too.
        const result = await db
          .deleteFrom('webhook_events')
          .where('id', 'in', (eb) =>
            eb
              .selectFrom('webhook_events as ev')
              .select('ev.id')
              .where('ev.created_at', '<', before)
              .where((w) =>
                w.not(
                  w.exists(
                    w.selectFrom('webhook_deliveries as d').select(sql.lit(1).as('one')).whereRef('d.event_id', '=', 'ev.id').where('d.status', '=', 'pending'),
                  ),
                ),
              )
              .limit(SWEEP_BATCH_SIZE),
          )
          .executeTakeFirst();
        const deleted = Number(result.numDeletedRows);
        total += deleted;
        if (deleted < SWEEP_BATCH_SIZE) return total;
      }
    },

    webhookBacklog: (now) => queryWebhookBacklog(db, now),
  };
}
