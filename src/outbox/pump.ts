/**
 * @module Runs the dispatcher off the response path: `kick()` after a request queued an email
 * starts one drain (coalescing kicks that arrive meanwhile), and `drain()` runs one and waits.
 * Errors are logged, never thrown at a request: the email stays queued and is retried.
 */
import type { Clock } from '../clock.js';
import type { Logger } from '../logger.js';
import { deliverDueEmails, type DeliveryReport } from './dispatcher.js';
import type { Mailer, OutboxStore } from './outbox.js';

export interface EmailPump {
  kick(): void;
  drain(): Promise<DeliveryReport>;
  /** Waits for a running drain; later kicks are ignored. */
  stop(): Promise<void>;
}

export function createEmailPump(deps: {
  outbox: OutboxStore;
  mailer: Mailer | null;
  clock: Clock;
  logger: Logger;
  maxAttempts: number;
  /** Called after a run that dropped email bodies (sent, dead or expired). */
  afterPurge: () => Promise<void>;
}): EmailPump {
  let running: Promise<DeliveryReport> | null = null;
  let again = false;
  let stopped = false;

  const runOnce = async (): Promise<DeliveryReport> => {
    const report = await deliverDueEmails(deps, deps.clock.now());
    if (report.sent + report.expired + report.failed > 0) await deps.afterPurge();
    if (report.failed > 0) deps.logger.warn({ failed: report.failed }, 'some emails could not be sent; they will be retried');
    return report;
  };

  const start = (): Promise<DeliveryReport> => {
    running = runOnce().finally(() => {
      running = null;
      if (again && !stopped) {
        again = false;
        start().catch(() => {});
      }
    });
    running.catch((error: unknown) => deps.logger.error({ err: error }, 'email delivery failed'));
    return running;
  };

  const waitUntilIdle = async (): Promise<void> => {
    while (running) await running.catch(() => {});
  };

  return {
    kick() {
      if (stopped) return;
      if (running) again = true;
      else start().catch(() => {});
    },
    async drain() {
      // A kick that arrived during a run starts another when it ends; wait for every run, before
      // and after our own, so nothing claimed by a concurrent run is still being sent on return.
      await waitUntilIdle();
      const report = await start();
      await waitUntilIdle();
      return report;
    },
    async stop() {
      stopped = true;
      again = false;
      await waitUntilIdle();
    },
  };
}
