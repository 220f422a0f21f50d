/**
 * @module Work that must not sit on a response path, but must not be lost either: each task's
 * failure is logged (never thrown at a client), and `settle()` waits for every task still
 * running — the server's shutdown and the email sender call it first. It knows no feature: the
 * sweep of expired rows is in sweep.ts.
 */
import type { Logger } from './logger.js';

export interface BackgroundTasks {
  /** Runs `task` after the current turn of the event loop (never before an answer being sent now). */
  run(name: string, task: () => Promise<unknown>): void;
  settle(): Promise<void>;
}

export function createBackgroundTasks(logger: Logger): BackgroundTasks {
  const running = new Set<Promise<unknown>>();
  return {
    run(name, task) {
      // Started from setImmediate, once the current request's answer has been written: on SQLite a
      // query runs on this thread, and begun at once it would run before the answer went out,
      // making an answer that must not depend on the task (the reset and sign-in-by-email
      // requests) wait for it.
      const promise = new Promise<void>((resolve) => setImmediate(resolve))
        .then(task)
        .catch((error: unknown) => logger.error({ err: error, task: name }, 'background task failed'))
        .finally(() => running.delete(promise));
      running.add(promise);
    },
    async settle() {
      while (running.size > 0) await Promise.all([...running]);
    },
  };
}
