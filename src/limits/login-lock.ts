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
 * An attempt is let through to the password check only while the subject's failures plus the
 * attempts still being checked are below LOCKOUT_MAX_FAILURES (`reserve`, atomic in every store:
 * memory, Redis, PostgreSQL). Checking the failures alone and counting after the hash would let
 * concurrent guesses all pass while the first ones are still hashing: about twice the allowed
 * guesses per lock (issue 22). So at most LOCKOUT_MAX_FAILURES attempts per subject ever reach
 * bcrypt, however many arrive at once, across every instance sharing the store.
 *
 * Two counts per subject keep that from hurting anyone who did nothing wrong:
 * - failures: only a failed password check adds one; only failures lock.
 * - in flight: `reserve` adds one, and the attempt takes it back whatever its outcome (success,
 *   failure or error: `release`). An attempt refused because the subject is busy is counted
 *   nowhere and told to retry in a second. The count expires after IN_FLIGHT_SECONDS, so a
 *   process that died mid-check frees its slot by itself.
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

/** `userId`: an account without an email (provider sign-in only) whose second-factor codes are counted (mfa/flow.ts). */
export type LockSubject = Extract<LimitSubject, { email: string } | { ip: string } | { device: string } | { userId: string }>;

/** An attempt let through to the password check (see `reserve`); `release` it whatever happens. */
export interface ReservedAttempt {
  readonly subjects: readonly LockSubject[];
}

export type Reservation =
  | { reserved: ReservedAttempt }
  /** A subject is locked: retry when the lock ends. */
  | { lockedForSeconds: number }
  /** The failures plus the attempts in flight make up the limit: retry in a moment. */
  | { busyForSeconds: number };

export interface LoginLock {
  /** Seconds until the last of `subjects`' locks ends; null when none of them is locked. */
  lockedForSeconds(subjects: readonly LockSubject[], now: Date): Promise<number | null>;
  /**
   * Lets an attempt through to the password check, counting it in flight against each subject;
   * refused (and counted nowhere) when a subject is locked, or when its failures plus the
   * attempts in flight make up the limit.
   */
  reserve(subjects: readonly LockSubject[], now: Date): Promise<Reservation>;
  /** The attempt failed: one failure for each subject; those that reach the limit lock, and are returned. */
  recordFailure(attempt: ReservedAttempt, now: Date): Promise<readonly LockSubject[]>;
  /**
   * The attempt succeeded: the failures of `forget` (the email, the device) are forgotten. An IP
   * keeps its failures: signing in to one's own account between guesses does not reset them.
   */
  recordSuccess(now: Date, forget: readonly LockSubject[]): Promise<void>;
  /** Takes the attempt's in-flight count back. Call once, whatever the outcome (finally). */
  release(attempt: ReservedAttempt): Promise<void>;
  /**
   * Forgets an email's failures and lifts its lock. A completed password reset calls this:
   * whoever set a new password through the emailed link controls the account anyway.
   */
  clearEmail(email: string, now: Date): Promise<void>;
  /** Forgets the failures and lifts the locks of `subjects` (an operator's unlock, src/admin/). */
  clear(subjects: readonly LockSubject[], now: Date): Promise<void>;
  /** The client addresses locked now, longest lock first, at most `max` (an operator's list, src/admin/). */
  listIpLocks(now: Date, max: number): Promise<IpLock[]>;
}

export interface IpLock {
  ip: string;
  secondsLeft: number;
}

export interface LockoutRule {
  maxFailures: number;
  durationSeconds: number;
}

const LOCK_EPOCH_MS = Date.UTC(2020, 0, 1);
/**
 * How long an attempt may stay counted in flight: far longer than a password check (bcrypt
 * answers in well under a second, or the hash pool refuses at once), short enough that the slot
 * of a process that died mid-check comes back by itself.
 */
const IN_FLIGHT_SECONDS = 60;
/** What a refused busy attempt is told to wait. */
const BUSY_RETRY_SECONDS = 1;

/** A subject's failures, counted in fixed windows of LOCKOUT_DURATION: the current one plus the previous. */
interface FailureWindows {
  count(subject: LockSubject, now: Date): Promise<number>;
  /** Counts one more failure; returns the subject's failures with it. */
  add(subject: LockSubject, now: Date): Promise<number>;
  forget(subject: LockSubject, now: Date): Promise<void>;
}

function createFailureWindows(backend: LimiterBackend, rule: LockoutRule): FailureWindows {
  const failures = backend.createLimiter({
    name: 'login-failures',
    points: rule.maxFailures,
    // Two windows: the previous window's count is still read during the current one.
    durationSeconds: 2 * rule.durationSeconds,
  });
  const failureKeys = (subject: LockSubject, now: Date): { current: string; previous: string } => {
    const { index } = fixedWindowAt(now, rule.durationSeconds);
    const key = subjectKey(subject);
    return { current: `${key}:${index}`, previous: `${key}:${index - 1}` };
  };
  return {
    async count(subject, now) {
      const keys = failureKeys(subject, now);
      const [current, previous] = await Promise.all([failures.read(keys.current), failures.read(keys.previous)]);
      return current + previous;
    },
    async add(subject, now) {
      const keys = failureKeys(subject, now);
      const [current, previous] = await Promise.all([failures.increment(keys.current), failures.read(keys.previous)]);
      return current + previous;
    },
    async forget(subject, now) {
      const keys = failureKeys(subject, now);
      await Promise.all([failures.remove(keys.current), failures.remove(keys.previous)]);
    },
  };
}

/** A subject's lock, stored as the instant it ends (see the module comment). */
interface LockEnds {
  /** Seconds until the last of `subjects`' locks ends; null when none of them is locked. */
  lockedForSeconds(subjects: readonly LockSubject[], now: Date): Promise<number | null>;
  /** Locks `subject` for LOCKOUT_DURATION from `now`. */
  write(subject: LockSubject, now: Date): Promise<void>;
  remove(subject: LockSubject): Promise<void>;
}

function createLockEnds(backend: LimiterBackend, rule: LockoutRule): LockEnds {
  // A lock is an instant: one reached in memory during a store outage holds after it, until it ends.
  const locks = backend.createLimiter({ name: 'login-locks', points: 1, durationSeconds: rule.durationSeconds, memoryMerge: 'max' });
  const lockedUntilMs = async (subject: LockSubject): Promise<number> => {
    const encoded = await locks.read(subjectKey(subject));
    return encoded === 0 ? 0 : LOCK_EPOCH_MS + encoded * 1000;
  };
  return {
    async lockedForSeconds(subjects, now) {
      const ends = await Promise.all(subjects.map(lockedUntilMs));
      const latest = Math.max(0, ...ends);
      return latest > now.getTime() ? secondsUntil(now, latest) : null;
    },
    async write(subject, now) {
      const untilMs = now.getTime() + rule.durationSeconds * 1000;
      // Whole seconds, rounded down: Retry-After then never exceeds LOCKOUT_DURATION (a lock that
      // ends up to a second early beats telling a person to wait 16 minutes for a 15-minute lock).
      const encoded = Math.floor((untilMs - LOCK_EPOCH_MS) / 1000);
      await locks.write(subjectKey(subject), encoded, rule.durationSeconds);
    },
    async remove(subject) {
      await locks.remove(subjectKey(subject));
    },
  };
}

export function createLoginLock(backend: LimiterBackend, rule: LockoutRule): LoginLock {
  const failures = createFailureWindows(backend, rule);
  const inFlight = backend.createLimiter({ name: 'login-in-flight', points: rule.maxFailures, durationSeconds: IN_FLIGHT_SECONDS });
  const locks = createLockEnds(backend, rule);
  const lockedForSeconds = locks.lockedForSeconds;
  // The limiters' keys are hashes: the addresses under a lock are listed here too, for operators.
  // Emails never are: the list would be a list of who tried which address.
  const lockedIps = backend.createLockList('login-ip-locks');

  const lock = async (subject: LockSubject, now: Date): Promise<void> => {
    // A fresh count once the lock ends: the next failure after it is the first, not the N+1-th.
    // The lock is written first: an attempt that reads the failures after they are forgotten then
    // finds the lock (`reserve` looks again after counting).
    await locks.write(subject, now);
    await failures.forget(subject, now);
    if ('ip' in subject) await lockedIps.add(subject.ip, now.getTime() + rule.durationSeconds * 1000);
  };

  const release = async (attempt: ReservedAttempt): Promise<void> => {
    await Promise.all(attempt.subjects.map((subject) => inFlight.decrement(subjectKey(subject))));
  };

  return {
    lockedForSeconds,

    async reserve(subjects, now) {
      const locked = await lockedForSeconds(subjects, now);
      if (locked !== null) return { lockedForSeconds: locked };
      const attempt: ReservedAttempt = { subjects };
      const counts = await Promise.all(
        subjects.map(async (subject) => {
          // Counted in flight first, then the failures read: of two concurrent attempts, the
          // later one always sees the earlier one, in one count or the other.
          const checking = await inFlight.increment(subjectKey(subject));
          return checking + (await failures.count(subject, now));
        }),
      );
      if (counts.some((count) => count > rule.maxFailures)) {
        await release(attempt);
        return { busyForSeconds: BUSY_RETRY_SECONDS };
      }
      // A lock written while this attempt was counting (its failures just forgotten) still holds.
      const lockedMeanwhile = await lockedForSeconds(subjects, now);
      if (lockedMeanwhile !== null) {
        await release(attempt);
        return { lockedForSeconds: lockedMeanwhile };
      }
      return { reserved: attempt };
    },

    async recordFailure(attempt, now) {
      const reached = await Promise.all(
        attempt.subjects.map(async (subject) => {
          if ((await failures.add(subject, now)) < rule.maxFailures) return null;
          await lock(subject, now);
          return subject;
        }),
      );
      return reached.filter((subject) => subject !== null);
    },

    async recordSuccess(now, forget) {
      await Promise.all(forget.map((subject) => failures.forget(subject, now)));
    },

    release,

    async clearEmail(email, now) {
      const subject: LockSubject = { email };
      await Promise.all([failures.forget(subject, now), locks.remove(subject)]);
    },

    async clear(subjects, now) {
      await Promise.all(
        subjects.flatMap((subject) => [failures.forget(subject, now), locks.remove(subject), ...('ip' in subject ? [lockedIps.remove(subject.ip)] : [])]),
      );
    },

    async listIpLocks(now, max) {
      const ips = await lockedIps.list(now.getTime(), max);
      // The lock itself says whether it still holds (an entry may outlive an unlock elsewhere).
      const held = await Promise.all(ips.map(async (ip) => ({ ip, secondsLeft: await lockedForSeconds([{ ip }], now) })));
      return held.filter((entry): entry is IpLock => entry.secondsLeft !== null).sort((a, b) => b.secondsLeft - a.secondsLeft || a.ip.localeCompare(b.ip));
    },
  };
}
