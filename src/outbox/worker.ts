/**
 * @module `gatehouse mail`: a separate sender process that drains the outbox over SMTP. Several
 * may run against one database (each claims disjoint rows). With `once` it drains what is due
 * and exits (for cron or tests); otherwise it polls until stopped.
 */
import type { Clock } from '../clock.js';
import type { Logger } from '../logger.js';
import { deliverDueEmails, type DeliveryReport } from './dispatcher.js';
import type { Mailer, OutboxStore } from './outbox.js';

export const MAIL_POLL_INTERVAL_MS = 5_000;

export interface MailWorkerDeps {
  outbox: OutboxStore;
  mailer: Mailer;
  clock: Clock;
  logger: Logger;
  maxAttempts: number;
  afterPurge: () => Promise<void>;
}

/** Drains until nothing due is left; returns the totals. */
export async function drainOutbox(deps: MailWorkerDeps): Promise<DeliveryReport> {
  const total: DeliveryReport = { sent: 0, failed: 0, expired: 0 };
  for (;;) {
    const report = await deliverDueEmails(deps, deps.clock.now());
    total.sent += report.sent;
    total.failed += report.failed;
    total.expired += report.expired;
    if (report.sent + report.failed + report.expired > 0) await deps.afterPurge();
    if (report.sent + report.failed === 0) return total;
  }
}

export async function runMailWorker(deps: MailWorkerDeps, options: { once: boolean; signal: AbortSignal }): Promise<void> {
  do {
    try {
      const report = await drainOutbox(deps);
      if (report.sent + report.failed + report.expired > 0) deps.logger.info(report, 'outbox drained');
    } catch (error) {
      deps.logger.error({ err: error }, 'outbox drain failed; retrying');
    }
    if (options.once) return;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, MAIL_POLL_INTERVAL_MS);
      options.signal.addEventListener(
        'abort',
        () => {
          clearTimeout(timer);
          resolve();
        },
        { once: true },
      );
    });
  } while (!options.signal.aborted);
}

/** The outbox as a table for operators: never a body, so never a link. */
export function formatOutboxTable(emails: Awaited<ReturnType<OutboxStore['listEmails']>>): string {
  const header = ['created', 'status', 'kind', 'recipient', 'attempts', 'last error'];
  const rows = emails.map((email) => [
    email.createdAt.toISOString(),
    email.status,
    email.template,
    email.recipient,
    String(email.attempts),
    (email.lastError ?? '').replace(/\s+/g, ' ').slice(0, 80),
  ]);
  const widths = header.map((title, i) => Math.max(title.length, ...rows.map((row) => (row[i] ?? '').length)));
  const line = (cells: string[]): string =>
    cells
      .map((cell, i) => cell.padEnd(widths[i] ?? 0))
      .join('  ')
      .trimEnd();
  return [line(header), ...rows.map(line)].join('\n');
}
