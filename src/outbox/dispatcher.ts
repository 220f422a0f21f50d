/**
 * @module Drains the outbox through a Mailer: due emails are sent and their bodies dropped;
 * a failed attempt is retried with exponential backoff, and after `maxAttempts` the row is
 * dead. Emails whose link has expired are never sent: their body is dropped instead.
 */
import type { Mailer, OutboxStore } from './outbox.js';

export const DEFAULT_MAX_ATTEMPTS = 5;
const BASE_BACKOFF_MS = 30_000;
const MAX_BACKOFF_MS = 60 * 60_000;
const BATCH_SIZE = 20;
/** A sender holds claimed rows this long; one that dies mid-send releases them after it. */
export const CLAIM_LEASE_MS = 5 * 60_000;

export interface DeliveryReport {
  sent: number;
  failed: number;
  expired: number;
}

export function backoffMs(attempt: number): number {
  return Math.min(MAX_BACKOFF_MS, BASE_BACKOFF_MS * 2 ** Math.max(0, attempt - 1));
}

export async function deliverDueEmails(deps: { outbox: OutboxStore; mailer: Mailer | null; maxAttempts?: number }, now: Date): Promise<DeliveryReport> {
  const report: DeliveryReport = { sent: 0, failed: 0, expired: await deps.outbox.expireStaleEmails(now) };
  if (deps.mailer === null) return report;
  const maxAttempts = deps.maxAttempts ?? DEFAULT_MAX_ATTEMPTS;
  for (const email of await deps.outbox.claimDueEmails(now, BATCH_SIZE, CLAIM_LEASE_MS)) {
    if (email.text === null) continue;
    try {
      await deps.mailer.send({ to: email.recipient, subject: email.subject, text: email.text, html: email.html });
      await deps.outbox.markEmailSent(email.id, now);
      report.sent += 1;
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      await deps.outbox.recordEmailFailure(email.id, message, new Date(now.getTime() + backoffMs(email.attempts + 1)), maxAttempts);
      report.failed += 1;
    }
  }
  return report;
}
