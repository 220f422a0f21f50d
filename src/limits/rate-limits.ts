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
 */
import { RateLimiterRes } from 'rate-limiter-flexible';
import type { RateLimitName, RateLimitRule } from '../config.js';
import { tooManyRequests } from '../errors.js';
import { fixedWindowAt, secondsUntil } from './fixed-window.js';
import type { Limiter, LimiterBackend } from './limiter-backend.js';
import { subjectKey, type LimitSubject } from './subject.js';

export interface RateLimits {
  /** Counts one request of `subject` against `name`; throws 429 `rate_limited` past the limit. */
  consume(name: RateLimitName, subject: LimitSubject, now: Date): Promise<void>;
}

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

  return {
    async consume(name, subject, now) {
      const entry = limiters.get(name);
      if (entry === undefined) throw new Error(`unknown rate limit "${name}"`);
      const window = fixedWindowAt(now, entry.rule.durationSeconds);
      try {
        await entry.limiter.consume(`${subjectKey(subject)}:${window.index}`);
      } catch (error) {
        // A RateLimiterRes is a refusal; anything else is a store failure with no insurance left.
        if (!(error instanceof RateLimiterRes)) throw error;
        options.onRefused?.(name);
        throw tooManyRequests('rate_limited', 'Too many requests. Try again later.', secondsUntil(now, window.endsAtMs));
      }
    },
  };
}
