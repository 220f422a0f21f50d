/**
 * @module Fixed time windows computed from the injected clock. rate-limiter-flexible measures
 * time with `Date.now()` inside every store and takes no clock, so Gatehouse never lets the store
 * decide when a window ends: the window's index is part of the counter's key and its end is
 * computed here from `now`. The store's own expiry only collects old keys. Moving the injected
 * clock past a window's end therefore starts a fresh counter, in memory, Redis and PostgreSQL
 * alike, and Retry-After is exact under time travel.
 */

export interface FixedWindow {
  /** Which window `now` falls in, counted from the Unix epoch; part of the counter's key. */
  index: number;
  startsAtMs: number;
  endsAtMs: number;
}

export function fixedWindowAt(now: Date, durationSeconds: number): FixedWindow {
  const durationMs = durationSeconds * 1000;
  const index = Math.floor(now.getTime() / durationMs);
  return { index, startsAtMs: index * durationMs, endsAtMs: (index + 1) * durationMs };
}

/** Whole seconds from `now` until `untilMs`, at least 1 (Retry-After must be positive). */
export function secondsUntil(now: Date, untilMs: number): number {
  return Math.max(1, Math.ceil((untilMs - now.getTime()) / 1000));
}
