/** Rows written together (src/db/write-batcher.ts): one write per turn of the event loop, split at the batch size, a failure reported to each caller of its batch only. */
import { expect, test } from 'vitest';
import { createWriteBatcher } from '../src/db/write-batcher.js';

test('rows asked for in one turn are written by one call, in order; a later turn gets its own', async () => {
  const writes: number[][] = [];
  const batcher = createWriteBatcher<number>(async (rows) => void writes.push([...rows]), 100);
  await Promise.all([1, 2, 3].map((row) => batcher.write(row)));
  await batcher.write(4);
  expect(writes).toEqual([[1, 2, 3], [4]]);
});

test('a turn with more rows than the batch size is written in several calls', async () => {
  const writes: number[][] = [];
  const batcher = createWriteBatcher<number>(async (rows) => void writes.push([...rows]), 2);
  await Promise.all([1, 2, 3, 4, 5].map((row) => batcher.write(row)));
  expect(writes).toEqual([[1, 2], [3, 4], [5]]);
});

test('a failed write rejects every caller of that batch with its error, and only those', async () => {
  const batcher = createWriteBatcher<number>(async (rows) => {
    if (rows.includes(2)) throw new Error('database unavailable');
  }, 2);
  const results = await Promise.allSettled([1, 2, 3].map((row) => batcher.write(row)));
  expect(results.map((result) => result.status)).toEqual(['rejected', 'rejected', 'fulfilled']);
  expect((results[0] as PromiseRejectedResult).reason).toEqual(new Error('database unavailable'));
});
