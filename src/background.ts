/**
 * @module Work that must not sit on a response path, but must not be lost either: each task's
 * failure is logged (never thrown at a client), and `settle()` waits for every task still
 * running — the server's shutdown and the email sender call it first.
 */
import type { Logger } from './logger.js';

export interface BackgroundTasks {
  run(name: string, task: () => Promise<unknown>): void;
  settle(): Promise<void>;
}

export function createBackgroundTasks(logger: Logger): BackgroundTasks {
  const running = new Set<Promise<unknown>>();
  return {
    run(name, task) {
      const promise = task()
        .catch((error: unknown) => logger.error({ err: error, task: name }, 'background task failed'))
        .finally(() => running.delete(promise));
      running.add(promise);
    },
    async settle() {
      while (running.size > 0) await Promise.all([...running]);
    },
  };
}
