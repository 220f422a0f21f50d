/**
 * @module Work that must not sit on a response path, but must not be lost either: each task's
 * failure is logged (never thrown at a client), and `settle()` waits for every task still
 * running — the server's shutdown and the email sender call it first. Also the sweep of expired
 * rows (`sweepExpiredRows`), which the server runs at start and then hourly.
 */
import type { Logger } from './logger.js';
import type { ConsumedSignInStore } from './oauth/store.js';
import type { Stores } from './stores.js';

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

/** What the sweep deletes from, with the retention it applies. */
export interface SweepDeps {
  stores: Pick<Stores, 'sessions' | 'audit' | 'verificationTokens' | 'resetTokens' | 'emailChangeTokens' | 'emailSignIns' | 'accounts'>;
  consumedSignIns: ConsumedSignInStore;
  auditRetentionDays: number;
}

/** How many rows each part of one sweep deleted. */
export interface SweepReport {
  sessions: number;
  auditEvents: number;
  verificationTokens: number;
  resetTokens: number;
  emailChangeTokens: number;
  emailSignIns: number;
  consumedSignIns: number;
  /** Provider links that waited for a code step that never came (oauth/flow.ts). */
  pendingLinks: number;
}

const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * Bounded growth (DESIGN §9.8): deletes expired sessions, audit rows older than
 * AUDIT_RETENTION_DAYS, expired verification tokens (a used one is deleted when used), used or
 * expired reset tokens, expired email change tokens, expired sign-ins by email, expired records
 * of consumed provider sign-ins and provider links whose code step never came, as of `now` (the
 * injected clock). The server runs it at start and then hourly; it throws on a database
 * failure, which the server logs as a warning.
 */
export async function sweepExpiredRows(deps: SweepDeps, now: Date): Promise<SweepReport> {
  const auditCutoff = new Date(now.getTime() - deps.auditRetentionDays * DAY_MS);
  return {
    sessions: await deps.stores.sessions.deleteExpiredSessions(now),
    auditEvents: await deps.stores.audit.deleteEventsBefore(auditCutoff),
    verificationTokens: await deps.stores.verificationTokens.deleteExpiredVerificationTokens(now),
    resetTokens: await deps.stores.resetTokens.deleteSpentResetTokens(now),
    emailChangeTokens: await deps.stores.emailChangeTokens.deleteExpiredEmailChangeTokens(now),
    emailSignIns: await deps.stores.emailSignIns.deleteExpiredEmailSignIns(now),
    consumedSignIns: await deps.consumedSignIns.deleteExpiredSignIns(now),
    pendingLinks: await deps.stores.accounts.deleteExpiredPendingLinks(now),
  };
}
