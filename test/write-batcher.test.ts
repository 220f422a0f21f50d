/** Rows written together (src/db/write-batcher.ts): one write per turn of the event loop, or per write in flight (group commit), split at the batch size, a failure reported to each caller of its batch only. */
import { expect, test } from 'vitest';
import { createWriteBatcher } from '../src/db/write-batcher.js';

test('rows asked for in one turn are written by one call, in order; a later turn gets its own', async () => {
  const writes: number[][] = [];
  const batcher = createWriteBatcher<number>(async (rows) => void writes.push([...rows]), 100);
  await Promise.all([1, 2, 3].map((row) => batcher.write(row)));
  await batcher.write(4);
  expect(writes).toEqual([[1, 2, 3], [4]]);
});

test('rows asked for while a write is in flight wait for it, then go together in the next one', async () => {
  const writes: number[][] = [];
  let finishFirst = (): void => {};
  const batcher = createWriteBatcher<number>(async (rows) => {
    writes.push([...rows]);
    if (writes.length === 1) await new Promise<void>((resolve) => (finishFirst = resolve));
  }, 100);
  const first = batcher.write(1);
  await new Promise((resolve) => setImmediate(resolve));
  expect(writes).toEqual([[1]]);
  // Three more turns while the first write is still on its way: none of them writes.
  const later: Promise<void>[] = [];
  for (const row of [2, 3, 4]) {
    later.push(batcher.write(row));
    await new Promise((resolve) => setImmediate(resolve));
  }
  expect(writes).toEqual([[1]]);
  finishFirst();
  await Promise.all([first, ...later]);
  expect(writes).toEqual([[1], [2, 3, 4]]);
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
