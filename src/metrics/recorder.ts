/**
 * @module What the service counts while it serves, in plain numbers: HTTP requests by route
 * pattern, method and status with their latency, sign-ins by result, locks and rate-limit
 * refusals. Nothing here loads prom-client: these are the numbers it reads at scrape time
 * (metrics/registry.ts), so the service never pays prom-client's memory (about 12 MB) unless
 * someone scrapes /metrics.
 *
 * The request path does three Map look-ups, one bucket search over 12 bounds and four number
 * updates; no string is built (the route pattern is Hono's own string). docs/metrics.md gives
 * the measured cost.
 */
import type { RateLimitName } from '../config.js';

/** Latency buckets in seconds (Prometheus `le`), from a session check (~1 ms) to a slow bcrypt. */
export const LATENCY_BUCKETS_SECONDS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5] as const;

/** Methods outside this list are counted as `other`, so a client cannot invent label values. */
const KNOWN_METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

export interface RequestSeries {
  readonly route: string;
  readonly method: string;
  readonly status: string;
  count: number;
  sumSeconds: number;
  /** Observations per bucket (not cumulative); the last slot is +Inf. */
  readonly buckets: Float64Array;
}

export type LoginResult = 'success' | 'failure' | 'locked' | 'rate_limited' | 'mfa_required';

export interface MetricsRecorder {
  /** One answered request: `route` is the matched pattern (or `unmatched`), never the raw path. */
  observeRequest(route: string, method: string, status: number, seconds: number): void;
  /** A sign-in attempt's outcome, by how it was tried (password, email_link, oauth, totp, …). */
  login(result: LoginResult, method: string): void;
  /** A login lock started (a failure reached LOCKOUT_MAX_FAILURES for an email, an IP or a device). */
  lockStarted(): void;
  rateLimitRefused(name: RateLimitName): void;
  /** Read by the scrape: every series seen so far. */
  readonly requests: () => Iterable<RequestSeries>;
  readonly logins: ReadonlyMap<string, { result: LoginResult; method: string; count: number }>;
  readonly refusals: ReadonlyMap<RateLimitName, number>;
  readonly locksStarted: () => number;
}

/** Audit methods are our own words (`password`, `email_code`, `password+totp`, `oauth`); anything else is `other`. */
const METHOD_LABEL = /^[a-z0-9_+]{1,40}$/;

export function createMetricsRecorder(): MetricsRecorder {
  // route → method → status → series. Keys are Hono's pattern strings and small numbers, so a
  // look-up hashes nothing new.
  const byRoute = new Map<string, Map<string, Map<number, RequestSeries>>>();
  const all: RequestSeries[] = [];
  const logins = new Map<string, { result: LoginResult; method: string; count: number }>();
  const refusals = new Map<RateLimitName, number>();
  let locks = 0;
  const bounds = LATENCY_BUCKETS_SECONDS;

  const seriesOf = (route: string, method: string, status: number): RequestSeries => {
    let byMethod = byRoute.get(route);
    if (byMethod === undefined) byRoute.set(route, (byMethod = new Map<string, Map<number, RequestSeries>>()));
    let byStatus = byMethod.get(method);
    if (byStatus === undefined) byMethod.set(method, (byStatus = new Map<number, RequestSeries>()));
    let series = byStatus.get(status);
    if (series === undefined) {
      series = { route, method, status: String(status), count: 0, sumSeconds: 0, buckets: new Float64Array(bounds.length + 1) };
      byStatus.set(status, series);
      all.push(series);
    }
    return series;
  };

  return {
    observeRequest(route, method, status, seconds) {
      const series = seriesOf(route, KNOWN_METHODS.has(method) ? method : 'other', status);
      series.count += 1;
      series.sumSeconds += seconds;
      let i = 0;
      while (i < bounds.length && seconds > (bounds[i] ?? Infinity)) i++;
      series.buckets[i] = (series.buckets[i] ?? 0) + 1;
    },
    login(result, method) {
      const label = METHOD_LABEL.test(method) ? method : 'other';
      const key = `${result} ${label}`;
      const entry = logins.get(key);
      if (entry === undefined) logins.set(key, { result, method: label, count: 1 });
      else entry.count += 1;
    },
    lockStarted() {
      locks += 1;
    },
    rateLimitRefused(name) {
      refusals.set(name, (refusals.get(name) ?? 0) + 1);
    },
    requests: () => all,
    logins,
    refusals,
    locksStarted: () => locks,
  };
}
