/**
 * @module The login lock (SPEC §3 "Login lock", §8): failed logins are counted by email and by
 * client IP; the LOCKOUT_MAX_FAILURES-th failure (default 5) locks that email and that IP for
 * LOCKOUT_DURATION (default 15 min). A browser holding a valid device cookie for the email is
 * counted and locked on its own instead (device-token.ts, OWASP "device cookies").
 *
 * States of one subject (an email, an IP or a device):
 *
 *   counting --(N-th failure)--> locked --(LOCKOUT_DURATION passes)--> counting (from zero)
 *   counting --(successful login)--> counting (from zero)
 *
 * Failures are counted in fixed windows of LOCKOUT_DURATION and the current and previous window
 * are added, so a failure is remembered for at least one and at most two durations: spreading
 * guesses across a window boundary does not reset the count.
 *
 * A lock is stored as the instant it ends, in whole seconds since LOCK_EPOCH (which fits the
 * stores' 32-bit counters until 2088), rounded down, and compared with the injected clock; the
 * store's own expiry only collects it afterwards. So a lock ends when the clock says, within a
 * second and never later, in every store.
 */
import { fixedWindowAt, secondsUntil } from './fixed-window.js';
import type { LimiterBackend } from './limiter-backend.js';
import { subjectKey, type LimitSubject } from './subject.js';

export type LockSubject = Extract<LimitSubject, { email: string } | { ip: string } | { device: string }>;

export interface LoginLock {
  /** Seconds until the last of `subjects`' locks ends; null when none of them is locked. */
  lockedForSeconds(subjects: readonly LockSubject[], now: Date): Promise<number | null>;
  /** Counts one failure for each subject and locks those that reach the limit; true if any did. */
  recordFailure(subjects: readonly LockSubject[], now: Date): Promise<boolean>;
  /** A successful login: forgets the subjects' failures (an active lock stays until it ends). */
  recordSuccess(subjects: readonly LockSubject[], now: Date): Promise<void>;
  /**
   * Forgets an email's failures and lifts its lock. A completed password reset calls this:
   * whoever set a new password through the emailed link controls the account anyway.
   */
  clearEmail(email: string, now: Date): Promise<void>;
}

export interface LockoutRule {
  maxFailures: number;
  durationSeconds: number;
}

const LOCK_EPOCH_MS = Date.UTC(2020, 0, 1);

export function createLoginLock(backend: LimiterBackend, rule: LockoutRule): LoginLock {
  const failures = backend.createLimiter({
    name: 'login-failures',
    points: rule.maxFailures,
    // Two windows: the previous window's count is still read during the current one.
    durationSeconds: 2 * rule.durationSeconds,
  });
  const locks = backend.createLimiter({ name: 'login-locks', points: 1, durationSeconds: rule.durationSeconds });

  const failureKeys = (subject: LockSubject, now: Date): { current: string; previous: string } => {
    const { index } = fixedWindowAt(now, rule.durationSeconds);
    const key = subjectKey(subject);
    return { current: `${key}:${index}`, previous: `${key}:${index - 1}` };
  };

  const forgetFailures = async (subject: LockSubject, now: Date): Promise<void> => {
    const keys = failureKeys(subject, now);
    await Promise.all([failures.remove(keys.current), failures.remove(keys.previous)]);
  };

  const lockedUntilMs = async (subject: LockSubject): Promise<number> => {
    const encoded = await locks.read(subjectKey(subject));
    return encoded === 0 ? 0 : LOCK_EPOCH_MS + encoded * 1000;
  };

  const lock = async (subject: LockSubject, now: Date): Promise<void> => {
    const untilMs = now.getTime() + rule.durationSeconds * 1000;
    // Whole seconds, rounded down: Retry-After then never exceeds LOCKOUT_DURATION (a lock that
    // ends up to a second early beats telling a person to wait 16 minutes for a 15-minute lock).
    const encoded = Math.floor((untilMs - LOCK_EPOCH_MS) / 1000);
    // A fresh count once the lock ends: the next failure after it is the first, not the N+1-th.
    await Promise.all([locks.write(subjectKey(subject), encoded, rule.durationSeconds), forgetFailures(subject, now)]);
  };

  return {
    async lockedForSeconds(subjects, now) {
      const ends = await Promise.all(subjects.map(lockedUntilMs));
      const latest = Math.max(0, ...ends);
      return latest > now.getTime() ? secondsUntil(now, latest) : null;
    },

    async recordFailure(subjects, now) {
      const reached = await Promise.all(
        subjects.map(async (subject) => {
          const keys = failureKeys(subject, now);
          const [current, previous] = await Promise.all([failures.increment(keys.current), failures.read(keys.previous)]);
          if (current + previous < rule.maxFailures) return false;
          await lock(subject, now);
          return true;
        }),
      );
      return reached.includes(true);
    },

    async recordSuccess(subjects, now) {
      await Promise.all(subjects.map((subject) => forgetFailures(subject, now)));
    },

    async clearEmail(email, now) {
      const subject: LockSubject = { email };
      await Promise.all([forgetFailures(subject, now), locks.remove(subjectKey(subject))]);
    },
  };
}
