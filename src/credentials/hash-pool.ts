/**
 * @module A dedicated, bounded pool of worker threads for bcrypt (and for checking password hashes
 * imported from other systems: imported/verifier-source.ts).
 *
 * bcrypt's async API runs on libuv's shared 4-thread pool, where it queues in front of
 * everything else that uses that pool (file system calls, DNS, WebCrypto). Here each hash runs
 * synchronously inside its own worker thread instead: one thread per core, each lowered in
 * scheduling priority (nice +10), so while logins saturate the CPU the event loop — session
 * checks, refusals, health checks — still gets a core at once. The queue is bounded: past it, a
 * hash is refused (503) at once instead of waiting behind minutes of work.
 */
import { createRequire } from 'node:module';
import os from 'node:os';
import { Worker } from 'node:worker_threads';
import { serviceUnavailable } from '../errors.js';
import { IMPORTED_VERIFIER_SOURCE } from './imported/verifier-source.js';

export interface HashPool {
  hash(data: string, rounds: number): Promise<string>;
  compare(data: string, hash: string): Promise<boolean>;
  /**
   * Checks `password` against a hash imported from another system (imported-hashes.ts), in a
   * hashing thread, taking at least as long as a bcrypt compare against `padHash` takes there:
   * a fast legacy format must not answer sooner than an unknown email (which costs that compare).
   */
  verifyImported(password: string, hash: string, padHash: string): Promise<boolean>;
  close(): Promise<void>;
  /** Jobs waiting for a thread now, and jobs running (for the metrics, read at scrape time). */
  load(): { queued: number; running: number };
}

export interface HashPoolOptions {
  /** Worker threads; default: the number of cores. */
  size?: number;
  /** Jobs waiting for a thread before new ones are refused. */
  maxQueue?: number;
}

type Job = {
  message:
    | { op: 'hash'; data: string; rounds: number }
    | { op: 'compare'; data: string; hash: string }
    | { op: 'verifyImported'; password: string; hash: string; padHash: string };
  resolve: (value: never) => void;
  reject: (error: Error) => void;
};

// Runs inside each worker thread (CommonJS, evaluated from a string so the same pool works from
// the TypeScript sources under test and from the compiled build).
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const os = require('node:os');
const crypto = require('node:crypto');
const bcrypt = require(workerData.bcryptPath);
const argon2 = require(workerData.argon2Path);
try { os.setPriority(workerData.niceness); } catch {}
${IMPORTED_VERIFIER_SOURCE}
// How long a bcrypt compare takes in this thread, per cost (a moving average), to pad to.
const compareMs = new Map();
const sleeper = new Int32Array(new SharedArrayBuffer(4));
function timedCompare(data, hash) {
  const started = performance.now();
  const result = bcrypt.compareSync(data, hash);
  const took = performance.now() - started;
  const cost = hash.slice(4, 6);
  const previous = compareMs.get(cost);
  compareMs.set(cost, previous === undefined ? took : previous * 0.8 + took * 0.2);
  return result;
}
function paddedVerifyImported(job) {
  const started = performance.now();
  let result = false;
  // A stored hash that cannot be read never matches (and is no server error).
  try { result = verifyImported(job.password, job.hash) === true; } catch {}
  const target = compareMs.get(job.padHash.slice(4, 6));
  if (target === undefined) timedCompare('', job.padHash);
  else if (performance.now() - started < target) Atomics.wait(sleeper, 0, 0, target - (performance.now() - started));
  return result;
}
parentPort.on('message', (job) => {
  try {
    const result =
      job.op === 'hash' ? bcrypt.hashSync(job.data, job.rounds) : job.op === 'compare' ? timedCompare(job.data, job.hash) : paddedVerifyImported(job);
    parentPort.postMessage({ result });
  } catch (error) {
    parentPort.postMessage({ error: String((error && error.message) || error) });
  }
});
`;
/** Niceness of the hashing threads: lower priority than the event loop, never needing root. */
const HASH_THREAD_NICENESS = 10;

export function createHashPool(options: HashPoolOptions = {}): HashPool {
  const size = Math.max(1, options.size ?? os.availableParallelism());
  const maxQueue = options.maxQueue ?? 1024;
  const require = createRequire(import.meta.url);
  const workerData = { bcryptPath: require.resolve('bcrypt'), argon2Path: require.resolve('@node-rs/argon2'), niceness: HASH_THREAD_NICENESS };
  const queue: Job[] = [];
  const idle: Worker[] = [];
  const busy = new Map<Worker, Job>();
  let closed = false;
  // Resolved whenever the last busy thread turns idle, for close().
  let onAllIdle: (() => void) | null = null;

  const dispatch = (): void => {
    for (let worker = idle.pop(); worker !== undefined; worker = idle.pop()) {
      const job = queue.shift();
      if (job === undefined) {
        idle.push(worker);
        return;
      }
      busy.set(worker, job);
      worker.postMessage(job.message);
    }
  };

  const spawn = (): void => {
    const worker = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData,
      // A hashing thread holds a few strings at a time: small heaps keep each thread's memory
      // to a few megabytes instead of a default-sized V8 heap.
      resourceLimits: { maxYoungGenerationSizeMb: 1, maxOldGenerationSizeMb: 12 },
    });
    worker.unref();
    worker.on('message', (reply: { result?: unknown; error?: string }) => {
      const job = busy.get(worker);
      busy.delete(worker);
      idle.push(worker);
      if (job) {
        if (reply.error !== undefined) job.reject(new Error(reply.error));
        else job.resolve(reply.result as never);
      }
      dispatch();
      if (busy.size === 0) onAllIdle?.();
    });
    worker.on('error', (error) => {
      const job = busy.get(worker);
      busy.delete(worker);
      job?.reject(error);
    });
    worker.on('exit', () => {
      busy.get(worker)?.reject(new Error('hashing thread exited'));
      busy.delete(worker);
      const at = idle.indexOf(worker);
      if (at >= 0) idle.splice(at, 1);
      if (!closed) {
        spawn();
        dispatch();
      }
    });
    idle.push(worker);
  };
  for (let i = 0; i < size; i++) spawn();

  const submit = <T>(message: Job['message']): Promise<T> => {
    if (closed) return Promise.reject(serviceUnavailable('The service is shutting down.'));
    if (queue.length >= maxQueue) {
      return Promise.reject(serviceUnavailable('The service is busy. Try again shortly.'));
    }
    return new Promise<T>((resolve, reject) => {
      queue.push({ message, resolve: resolve, reject });
      dispatch();
    });
  };

  return {
    hash: (data, rounds) => submit<string>({ op: 'hash', data, rounds }),
    compare: (data, hash) => submit<boolean>({ op: 'compare', data, hash }),
    verifyImported: (password, hash, padHash) => submit<boolean>({ op: 'verifyImported', password, hash, padHash }),
    load: () => ({ queued: queue.length, running: busy.size }),
    async close() {
      closed = true;
      for (const job of queue.splice(0)) job.reject(serviceUnavailable('The service is shutting down.'));
      // Never terminate a thread inside bcrypt's synchronous hash: the native call then throws
      // into a dying environment and aborts the whole process. A running hash ends within a
      // second; wait for it, then stop the idle threads.
      if (busy.size > 0) await new Promise<void>((resolve) => (onAllIdle = resolve));
      await Promise.all(idle.map((worker) => worker.terminate()));
    },
  };
}
