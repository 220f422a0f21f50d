/**
 * @module Refusals are counted, not written one by one. A request refused by a limit — a rate
 * limit (`reason: "rate_limited"`), the login lock (`locked`) or too many attempts in flight at
 * once (`busy`) — costs the client nothing, so a flood of them would otherwise add an audit row
 * each, and retention bounds the trail's age, not its volume.
 *
 * The first refusal of a subject in a window is written as before, with all its detail. Later
 * ones in that window are only counted here, in memory; once the window is over, one row of the
 * same type and reason says how many there were: `refusedCount` (all of the window's refusals
 * of that subject, the first included), `windowStart` and `windowEnd`, and the fields every one
 * of them shared (`email`, `method`, `provider`, the IP…). So a flood adds at most two rows per
 * subject and window, and an operator's filter by type or reason still finds them.
 *
 * The subject is what the limit counted: the client IP for a rate limit (the sign-in limits all
 * count per IP), the email address for the login lock and attempts in flight (the account under
 * attack, whichever addresses the attempts come from).
 *
 * The summary is written at the subject's next refusal after the window ended, by `flushEnded`
 * (driven by a timer and by the sweep), or by `flushAll` at shutdown. The metrics are not
 * affected: the audit observer (metrics/audit-observer.ts) wraps this store and counts every
 * event it is handed, a counted refusal included, and never sees a summary row.
 */
import type { Logger } from '../logger.js';
import type { AuditEvent, AuditEventType, AuditMetadata, AuditStore } from './audit-log.js';

/** The audit reasons of a request refused by a limit (`daily_code_limit`: an address's wrong email codes of the day). */
const REFUSAL_REASONS = new Set(['rate_limited', 'locked', 'busy', 'daily_code_limit']);

/**
 * One fixed window for every refusal, aligned to the clock (:00, :15, :30, :45), rather than the
 * refusing limit's own: this layer sees a refusal, not which limit made it (a rate limit of a
 * minute, a lock of 15 minutes, a cap of a day), and one window gives one bound for them all —
 * at most two rows per subject per quarter hour. 15 minutes is also the default login limit's
 * window and lock's duration, so a flood's summary lands about when its client may try again.
 */
export const REFUSAL_WINDOW_MS = 15 * 60 * 1000;

/**
 * At most this many subjects are counted at once (a few MB at most). Past it, the refusals of a
 * new subject are counted in an overflow tally of their type and reason, written as one row
 * (`overflow: true`) at the window's end: a flood from more addresses than this adds no more.
 */
export const MAX_TRACKED_SUBJECTS = 10_000;

export interface RefusalCounter {
  /** The audit store to write through: refusals past a subject's first in its window are only counted. */
  readonly audit: AuditStore;
  /** Writes the summary of every window that ended by `now` and forgets those windows. */
  flushEnded(now: Date): Promise<void>;
  /** Writes the summary of every window still counted, ended or not (at shutdown, so no count is lost). */
  flushAll(): Promise<void>;
}

export interface RefusalCounterOptions {
  /** A summary that cannot be written is logged here; the refused request still gets its answer. */
  logger?: Logger;
  maxTrackedSubjects?: number;
}

/** The refusals of one subject (or the overflow of one kind) in one window. */
interface Tally {
  type: AuditEventType;
  window: number;
  count: number;
  /** A field differing between two of the refusals is dropped (set to null). */
  userId: string | null;
  ip: string | null;
  severalIps: boolean;
  userAgent: string | null;
  metadata: AuditMetadata;
  lastAt: Date;
  overflow: boolean;
}

function windowOf(at: Date): number {
  return Math.floor(at.getTime() / REFUSAL_WINDOW_MS);
}

/** The refusal's kind (type, reason, method, provider) and subject; null for any other event. */
function keysOf(event: AuditEvent): { kind: string; subject: string } | null {
  const { reason, method, provider, email } = event.metadata;
  if (typeof reason !== 'string' || !REFUSAL_REASONS.has(reason)) return null;
  const kind = JSON.stringify([event.type, reason, method ?? null, provider ?? null]);
  // A rate limit counts the IP; the lock counts the account, by its address (or id when it has none).
  let who = `ip:${event.ip}`;
  if (reason !== 'rate_limited' && typeof email === 'string') who = `email:${email.toLowerCase()}`;
  else if (reason !== 'rate_limited' && event.userId !== null) who = `user:${event.userId}`;
  return { kind, subject: `${kind}${who}` };
}

function startTally(event: AuditEvent, window: number, overflow: boolean): Tally {
  return {
    type: event.type,
    window,
    count: 1,
    userId: event.userId,
    ip: event.ip,
    severalIps: false,
    userAgent: event.userAgent,
    metadata: { ...event.metadata },
    lastAt: event.at,
    overflow,
  };
}

function addTo(tally: Tally, event: AuditEvent): void {
  tally.count++;
  if (event.at.getTime() > tally.lastAt.getTime()) tally.lastAt = event.at;
  if (tally.userId !== event.userId) tally.userId = null;
  if (tally.userAgent !== event.userAgent) tally.userAgent = null;
  if (!tally.severalIps && tally.ip !== event.ip) {
    tally.ip = null;
    tally.severalIps = true;
  }
  // A handful of fields: only those every refusal shared stay (an email the flood varied goes).
  for (const key of Object.keys(tally.metadata)) if (tally.metadata[key] !== event.metadata[key]) delete tally.metadata[key];
}

function summaryOf(tally: Tally): AuditEvent {
  return {
    type: tally.type,
    userId: tally.userId,
    ip: tally.ip,
    userAgent: tally.userAgent,
    metadata: {
      ...tally.metadata,
      ...(tally.overflow ? { overflow: true } : {}),
      ...(tally.severalIps ? { severalIps: true } : {}),
      refusedCount: tally.count,
      windowStart: new Date(tally.window * REFUSAL_WINDOW_MS).toISOString(),
      windowEnd: new Date((tally.window + 1) * REFUSAL_WINDOW_MS).toISOString(),
    },
    // The last refusal's instant: retention and time filters see when the flood was, not when it was summed up.
    at: tally.lastAt,
  };
}

/** A subject's own tally needs a summary only past its first refusal, which has its row; an overflow tally always does. */
function needsSummary(tally: Tally): boolean {
  return tally.overflow || tally.count > 1;
}

export function createRefusalCounter(inner: AuditStore, options: RefusalCounterOptions = {}): RefusalCounter {
  const maxTracked = options.maxTrackedSubjects ?? MAX_TRACKED_SUBJECTS;
  /**
   * Subject → tally, in the order of their first refusal. Every tally counts in the same windows,
   * so those of ended windows come first (up to a request whose instant was taken a moment
   * before another's): each refusal retires them from the front, a constant cost per refusal.
   */
  const tracked = new Map<string, Tally>();
  /** Kind → the overflow tally: a few (the event types, reasons and methods), never capped. */
  const overflow = new Map<string, Tally>();

  const write = async (events: readonly AuditEvent[]): Promise<void> => {
    // Queued in order, as one group-committed batch (db/write-batcher.ts).
    await Promise.all(
      events.map((event) =>
        inner.recordEvent(event).catch((error: unknown) => {
          options.logger?.error({ err: error, type: event.type, refusedCount: event.metadata.refusedCount }, 'could not write a refusal summary');
        }),
      ),
    );
  };

  /** Takes out the tallies of windows before `window` (every one when `window` is null) and gives their summaries. */
  const retire = (window: number | null, fromFrontOnly: boolean): AuditEvent[] => {
    const due: AuditEvent[] = [];
    for (const [key, tally] of tracked) {
      if (window !== null && tally.window >= window) {
        if (fromFrontOnly) break;
        continue;
      }
      tracked.delete(key);
      if (needsSummary(tally)) due.push(summaryOf(tally));
    }
    for (const [key, tally] of overflow) {
      if (window !== null && tally.window >= window) continue;
      overflow.delete(key);
      due.push(summaryOf(tally));
    }
    return due;
  };

  const audit: AuditStore = {
    ...inner,
    async recordEvent(event) {
      const keys = keysOf(event);
      if (keys === null) return inner.recordEvent(event);
      const window = windowOf(event.at);
      const due = retire(window, true);
      const own = tracked.get(keys.subject);
      if (own !== undefined && own.window < window) {
        // Behind a tally of a later window in the order: retired here, at its own next refusal.
        tracked.delete(keys.subject);
        if (needsSummary(own)) due.push(summaryOf(own));
      } else if (own !== undefined) {
        addTo(own, event);
        return write(due);
      }
      if (tracked.size < maxTracked) {
        tracked.set(keys.subject, startTally(event, window, false));
        // The first refusal of the window keeps its own row, after the summaries of the last one.
        await Promise.all([write(due), inner.recordEvent(event)]);
        return;
      }
      const spill = overflow.get(keys.kind);
      if (spill === undefined) overflow.set(keys.kind, startTally(event, window, true));
      else addTo(spill, event);
      return write(due);
    },
  };

  return {
    audit,
    flushEnded: (now) => write(retire(windowOf(now), false)),
    flushAll: () => write(retire(null, false)),
  };
}
