/**
 * @module Rows written together (group commit): while one multi-row INSERT is on its way, the
 * rows asked for meanwhile wait, and go together in the next one as soon as it returns. With
 * nothing in flight, the rows asked for in one turn of the event loop leave at once, from
 * setImmediate, once the turn's requests have all asked. So a quiet server writes each row
 * straight away, and a flood pays one statement per round trip to the database, however many
 * rows it brings, instead of one per turn or per request (docs/performance.md).
 *
 * Each caller's promise settles when its batch is written (or fails with the batch's error), so
 * an answer that awaits its row is still sent only once the row is stored: nothing is lost that
 * an answer claimed.
 */

export interface WriteBatcher<T> {
  /** Queues `row`; resolves once the batch holding it is written. */
  write(row: T): Promise<void>;
}

interface Pending<T> {
  row: T;
  resolve: () => void;
  reject: (error: unknown) => void;
}

export function createWriteBatcher<T>(writeRows: (rows: readonly T[]) => Promise<void>, maxBatchSize: number): WriteBatcher<T> {
  const queue: Pending<T>[] = [];
  /** A flush is scheduled or writing: rows pushed now are taken by it, nothing more to start. */
  let flushing = false;

  const writeBatch = async (batch: readonly Pending<T>[]): Promise<void> => {
    try {
      await writeRows(batch.map((pending) => pending.row));
      for (const pending of batch) pending.resolve();
    } catch (error) {
      for (const pending of batch) pending.reject(error);
    }
  };

  const flush = async (): Promise<void> => {
    while (queue.length > 0) await writeBatch(queue.splice(0, maxBatchSize));
    flushing = false;
  };

  return {
    write(row) {
      return new Promise<void>((resolve, reject) => {
        queue.push({ row, resolve, reject });
        if (!flushing) {
          flushing = true;
          setImmediate(() => void flush());
        }
      });
    },
  };
}
