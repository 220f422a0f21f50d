/**
 * @module The login lock (SPEC §3 "Login lock", §8): failed logins are counted by email and by
 * client IP; the LOCKOUT_MAX_FAILURES-th failure (default 5) locks that email and that IP for
 * LOCKOUT_DURATION (default 15 min). A browser holding a valid device cookie for the email is
 * counted and locked on its own instead (device-token.ts, OWASP "device cookies").
 *
 * States of one subject (an email, an IP or a device):
 *
 *   counting --(N-th failure)--> locked --(LOCKOUT_DURATION passes)--> counting (from zero)
 *   counting --(successful login)--> counting (an email or device from zero; an IP keeps its
 *                                     other failures, so logging in to one's own account between
 *                                     guesses does not reset a spraying address)
 *
 * An attempt is counted BEFORE the password is checked: `reserve` adds one to each subject's
 * count, atomically in every store (memory, Redis, PostgreSQL), and refuses when that passes the
 * limit; a success takes its reservation back. Checking first and counting after the hash would
 * let concurrent guesses all pass the check while the first ones are still hashing: about twice
 * the allowed guesses per lock (issue 22). So at most LOCKOUT_MAX_FAILURES attempts per subject
 * ever reach bcrypt, however many arrive at once, across every instance sharing the store.
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

/** An attempt counted in advance against each of its subjects (see `reserve`). */
export interface ReservedAttempt {
  readonly subjects: readonly LockSubject[];
  /** Per subject: the failure key the reservation went to, and the count it made. */
  readonly counted: readonly { key: string; failures: number }[];
}

export type Reservation = { reserved: ReservedAttempt } | { refusedForSeconds: number };

export interface LoginLock {
  /** Seconds until the last of `subjects`' locks ends; null when none of them is locked. */
  lockedForSeconds(subjects: readonly LockSubject[], now: Date): Promise<number | null>;
  /**
   * Counts an attempt as a failure of each subject before the password is checked. Refused (and
   * counted nowhere) when a subject is locked, or when the attempts already counted against it,
   * failed or still in flight, make up the limit.
   */
  reserve(subjects: readonly LockSubject[], now: Date): Promise<Reservation>;
  /** The attempt failed: its reservation stands, and the subjects that reached the limit lock. True if any did. */
  recordFailure(attempt: ReservedAttempt, now: Date): Promise<boolean>;
  /**
   * The attempt succeeded: its reservation is taken back, and the failures of `forget` (the
   * email, the device) are forgotten. An IP keeps its other failures. An active lock stays.
   */
  recordSuccess(attempt: ReservedAttempt, now: Date, forget: readonly LockSubject[]): Promise<void>;
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
    // The lock is written first: an attempt that counts itself after the failures are forgotten
    // then finds the lock (`reserve` looks again after counting).
    await locks.write(subjectKey(subject), encoded, rule.durationSeconds);
    await forgetFailures(subject, now);
  };

  const release = async (attempt: ReservedAttempt): Promise<void> => {
    await Promise.all(attempt.counted.map(({ key }) => failures.decrement(key)));
  };

  const lockedForSeconds = async (subjects: readonly LockSubject[], now: Date): Promise<number | null> => {
    const ends = await Promise.all(subjects.map(lockedUntilMs));
    const latest = Math.max(0, ...ends);
    return latest > now.getTime() ? secondsUntil(now, latest) : null;
  };

  return {
    lockedForSeconds,

    async reserve(subjects, now) {
      const locked = await lockedForSeconds(subjects, now);
      if (locked !== null) return { refusedForSeconds: locked };
      const counted = await Promise.all(
        subjects.map(async (subject) => {
          const keys = failureKeys(subject, now);
          const [current, previous] = await Promise.all([failures.increment(keys.current), failures.read(keys.previous)]);
          return { key: keys.current, failures: current + previous };
        }),
      );
      // Past the limit, the allowance is taken by failures and attempts still in flight: if those
      // fail, the lock starts and lasts a full duration, so that is the honest wait. The refused
      // attempt stays counted: taking it back could land after a lock has reset the count, push it
      // below zero and grant extra guesses once the lock ends; and its subjects are at their limit.
      if (counted.some(({ failures: count }) => count > rule.maxFailures)) return { refusedForSeconds: rule.durationSeconds };
      // A lock written while this attempt was counting (its failures just forgotten) still holds.
      const lockedMeanwhile = await lockedForSeconds(subjects, now);
      if (lockedMeanwhile !== null) return { refusedForSeconds: lockedMeanwhile };
      return { reserved: { subjects, counted } };
    },

    async recordFailure(attempt, now) {
      const reached = await Promise.all(
        attempt.subjects.map(async (subject, i) => {
          if ((attempt.counted[i]?.failures ?? 0) < rule.maxFailures) return false;
          await lock(subject, now);
          return true;
        }),
      );
      return reached.includes(true);
    },

    async recordSuccess(attempt, now, forget) {
      await release(attempt);
      await Promise.all(forget.map((subject) => forgetFailures(subject, now)));
    },

    async clearEmail(email, now) {
      const subject: LockSubject = { email };
      await Promise.all([forgetFailures(subject, now), locks.remove(subjectKey(subject))]);
    },
  };
}
