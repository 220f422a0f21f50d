/** @module The outbox's rows by status for the metrics: one grouped query, bounded in time. */
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';

/** A scrape waits at most this long for the count; then the gauge reports the query as down. */
export const OUTBOX_COUNT_TIMEOUT_MS = 1000;

export function createOutboxBacklogQuery(db: Kysely<Database>, timeoutMs = OUTBOX_COUNT_TIMEOUT_MS): () => Promise<ReadonlyMap<string, number>> {
  return async () => {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`the outbox count took longer than ${timeoutMs} ms`)), timeoutMs);
      timer.unref();
    });
    try {
      const rows = await Promise.race([
        db
          .selectFrom('email_outbox')
          .select((eb) => ['status', eb.fn.countAll<string | number>().as('count')])
          .groupBy('status')
          .execute(),
        timeout,
      ]);
      return new Map(rows.map((row) => [row.status, Number(row.count)]));
    } finally {
      clearTimeout(timer);
    }
  };
}
