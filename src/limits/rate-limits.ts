/**
 * @module Request rate limits per endpoint and subject (SPEC §8, RATE_LIMIT_* in DESIGN §3):
 * a fixed window of the configured length, counted per subject in the limiter store.
 *
 * Flows call `consume` first, after the body is validated (a 400 costs nothing) and before any
 * other work, as the spec's order of work says:
 *
 * @example
 * await deps.limits.consume('passwordResetRequest', { ip: ctx.ip }, ctx.now);
 * await deps.limits.consume('passwordResetRequest', { email: body.email }, ctx.now);
 * await deps.limits.consume('resendVerification', { userId: user.id }, ctx.now);
 *
 * A refusal throws 429 `rate_limited` with Retry-After = seconds until the window ends.
 * Windows are aligned to the epoch (fixed-window.ts says why), so a client can at most spend
 * a window's allowance at its end and another at the next one's start: twice the limit over a
 * short span, never more.
 *
 * A subject refused once is refused again from this instance's memory until its window ends,
 * without asking the store: within a window a count only grows (nothing takes a request back),
 * so a subject over its limit stays over it, on every instance, and the answer is the store's
 * own. A flood over its limit then costs no store call at all (docs/performance.md).
 * rate-limiter-flexible's in-memory block does the same on the wall clock rather than the
 * injected one, and only behind a promise; `refusedAlready` lets a flow refuse before it asks
 * the store anything else (the login's lock reads).
 */
import { RateLimiterRes } from 'rate-limiter-flexible';
import type { RateLimitName, RateLimitRule } from '../config.js';
import { tooManyRequests, type AppError } from '../errors.js';
import { fixedWindowAt, secondsUntil } from './fixed-window.js';
import type { LimiterBackend } from './limiter-backend.js';
import type { Limiter } from './limiter.js';
import { subjectKey, type LimitSubject } from './subject.js';

export interface RateLimits {
  /** Counts one request of `subject` against `name`; throws 429 `rate_limited` past the limit. */
  consume(name: RateLimitName, subject: LimitSubject, now: Date): Promise<void>;
  /**
   * The 429 to throw when this instance has already refused `subject` in the current window of
   * `name` (counted as a refusal; the store is not asked); null otherwise, and `consume` decides.
   */
  refusedAlready(name: RateLimitName, subject: LimitSubject, now: Date): AppError | null;
  /**
   * Throws the 429 when `subject` has used up `name` in the current window, without counting
   * anything: for a budget of failures, checked before each try and consumed only by a failure.
   */
  assertAllowance(name: RateLimitName, subject: LimitSubject, now: Date): Promise<void>;
}

/**
 * At most this many refused subjects are remembered at once (about 1 MB): past it, the one
 * remembered longest is forgotten, and its next request is asked of the store again.
 */
const MAX_REMEMBERED_REFUSALS = 10_000;

export interface RateLimitOptions {
  /** Told of each refusal, by the limit's name (the metrics count them); must not throw. */
  onRefused?: (name: RateLimitName) => void;
}

export function createRateLimits(backend: LimiterBackend, rules: Readonly<Record<RateLimitName, RateLimitRule>>, options: RateLimitOptions = {}): RateLimits {
  const limiters = new Map<RateLimitName, { rule: RateLimitRule; limiter: Limiter }>();
  for (const [name, rule] of Object.entries(rules) as [RateLimitName, RateLimitRule][]) {
    limiters.set(name, {
      rule,
      limiter: backend.createLimiter({ name: `rate:${name}`, points: rule.points, durationSeconds: rule.durationSeconds }),
    });
  }

  /**
   * Refused subjects' counter keys (limit, subject, window) → the end of that window, in ms, in
   * the order they were refused. An expired entry goes when it is next read; a full map forgets
   * its oldest (a constant cost per refusal, however many subjects a distributed flood brings).
   */
  const refused = new Map<string, number>();
  const remember = (key: string, endsAtMs: number): void => {
    if (refused.size >= MAX_REMEMBERED_REFUSALS) refused.delete(refused.keys().next().value as string);
    refused.set(key, endsAtMs);
  };
  const refusal = (name: RateLimitName, now: Date, endsAtMs: number): AppError => {
    options.onRefused?.(name);
    return tooManyRequests('rate_limited', 'Too many requests. Try again later.', secondsUntil(now, endsAtMs));
  };
  const counterOf = (name: RateLimitName, subject: LimitSubject, now: Date) => {
    const entry = limiters.get(name);
    if (entry === undefined) throw new Error(`unknown rate limit "${name}"`);
    const window = fixedWindowAt(now, entry.rule.durationSeconds);
    return { limiter: entry.limiter, key: `${subjectKey(subject)}:${window.index}`, endsAtMs: window.endsAtMs };
  };
  const rememberedRefusal = (name: RateLimitName, key: string, now: Date): AppError | null => {
    const rememberedKey = `${name}|${key}`;
    const until = refused.get(rememberedKey);
    if (until === undefined) return null;
    if (now.getTime() < until) return refusal(name, now, until);
    refused.delete(rememberedKey);
    return null;
  };

  return {
    async consume(name, subject, now) {
      const { limiter, key, endsAtMs } = counterOf(name, subject, now);
      const remembered = rememberedRefusal(name, key, now);
      if (remembered !== null) throw remembered;
      try {
        await limiter.consume(key);
      } catch (error) {
        // A RateLimiterRes is a refusal; anything else is a store failure with no insurance left.
        if (!(error instanceof RateLimiterRes)) throw error;
        remember(`${name}|${key}`, endsAtMs);
        throw refusal(name, now, endsAtMs);
      }
    },

    refusedAlready: (name, subject, now) => rememberedRefusal(name, counterOf(name, subject, now).key, now),

    async assertAllowance(name, subject, now) {
      const { limiter, key, endsAtMs } = counterOf(name, subject, now);
      const remembered = rememberedRefusal(name, key, now);
      if (remembered !== null) throw remembered;
      const rule = limiters.get(name)?.rule;
      if (rule !== undefined && (await limiter.read(key)) >= rule.points) {
        remember(`${name}|${key}`, endsAtMs);
        throw refusal(name, now, endsAtMs);
      }
    },
  };
}
