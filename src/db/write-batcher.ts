/**
 * @module Rows written together: every row asked for in one turn of the event loop goes into the
 * database in one multi-row INSERT, sent from setImmediate once the turn's requests have all
 * asked. Each caller's promise settles when its batch is written (or fails with the batch's
 * error), so an answer that awaits its row is still sent only once the row is stored: nothing is
 * lost that an answer claimed, and a flood of requests pays one statement per turn instead of one
 * per request (docs/performance.md).
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
  let queue: Pending<T>[] = [];
  let scheduled = false;

  const writeBatch = async (batch: readonly Pending<T>[]): Promise<void> => {
    try {
      await writeRows(batch.map((pending) => pending.row));
      for (const pending of batch) pending.resolve();
    } catch (error) {
      for (const pending of batch) pending.reject(error);
    }
  };

  const flush = (): void => {
    scheduled = false;
    const taken = queue;
    queue = [];
    for (let start = 0; start < taken.length; start += maxBatchSize) void writeBatch(taken.slice(start, start + maxBatchSize));
  };

  return {
    write(row) {
      return new Promise<void>((resolve, reject) => {
        queue.push({ row, resolve, reject });
        if (!scheduled) {
          scheduled = true;
          setImmediate(flush);
        }
      });
    },
  };
}
