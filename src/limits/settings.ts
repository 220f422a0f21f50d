/** @module The limits' settings: the login lock, and the Redis where limits and locks are counted. */
import { defineSettings, MAX_LIMIT_WINDOW_SECONDS, parseDurationSeconds } from '../settings.js';

export interface LimitSettings {
  lockout: { maxFailures: number; durationSeconds: number };
  redisUrl: string | null;
  /** Prefix of every Redis key, so several deployments can share one Redis. */
  redisKeyPrefix: string;
  /** REDIS_TIMEOUT: past it a limiter call is answered from memory and Redis is probed off the request path. */
  redisTimeoutMs: number;
}

export const limitSettings = defineSettings({
  name: 'limits',
  variables: [
    { name: 'LOCKOUT_MAX_FAILURES', default: '5', meaning: 'failed logins (by email, and by IP) that lock sign-in (1 to 1000)' },
    { name: 'LOCKOUT_DURATION', default: '15m', meaning: 'how long a login lock lasts: 900, 15m or 1h (at most 7 days)' },
    {
      name: 'REDIS_URL',
      default: '',
      meaning: "redis:// or rediss:// where rate limits and locks are counted (unset: in PostgreSQL when DATABASE_URL is, else in this process's memory)",
    },
    { name: 'REDIS_KEY_PREFIX', default: 'gatehouse', meaning: 'prefix of every Redis key, so deployments can share a Redis' },
    {
      name: 'REDIS_TIMEOUT',
      default: '250ms',
      meaning: "longest a rate limit or lock waits for Redis before this instance's memory answers instead (250ms or 1s; a bare number is seconds)",
    },
  ],
  read: (reader): LimitSettings => {
    const maxFailures = reader.integer('LOCKOUT_MAX_FAILURES', 5, 1, 1000);
    let lockoutDurationSeconds = 15 * 60;
    const rawLockoutDuration = reader.read('LOCKOUT_DURATION');
    if (rawLockoutDuration !== undefined) {
      const seconds = parseDurationSeconds(rawLockoutDuration);
      if (seconds === null) reader.problem(`LOCKOUT_DURATION: expected a duration such as 900, 15m or 1h, got "${rawLockoutDuration}"`);
      else if (seconds > MAX_LIMIT_WINDOW_SECONDS) reader.problem(`LOCKOUT_DURATION: must be at most 7 days (168h), got "${rawLockoutDuration}"`);
      else lockoutDurationSeconds = seconds;
    }

    const redisUrl = reader.read('REDIS_URL') ?? null;
    if (redisUrl !== null && !/^rediss?:\/\//.test(redisUrl)) {
      reader.problem('REDIS_URL: expected redis://host:port or rediss://host:port');
    }
    const redisKeyPrefix = reader.read('REDIS_KEY_PREFIX') ?? 'gatehouse';
    if (!/^[A-Za-z0-9:_-]{1,64}$/.test(redisKeyPrefix)) {
      reader.problem('REDIS_KEY_PREFIX: expected 1 to 64 letters, digits, ":", "_" or "-"');
    }
    return {
      lockout: Object.freeze({ maxFailures, durationSeconds: lockoutDurationSeconds }),
      redisUrl,
      redisKeyPrefix,
      redisTimeoutMs: reader.durationMs('REDIS_TIMEOUT', 250, 10, 60_000, '10ms to 60s'),
    };
  },
});
