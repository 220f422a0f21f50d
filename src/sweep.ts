/**
 * @module The sweep of expired rows (`sweepExpiredRows`), which the server runs at start and then
 * hourly. Apart from background.ts, the generic runner every layer uses, so that the runner
 * reaches no feature's store.
 */
import type { ConsumedSignInStore } from './oauth/store.js';
import type { Stores } from './stores.js';

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
