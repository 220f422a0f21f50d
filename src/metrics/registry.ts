/**
 * @module The Prometheus exposition: a prom-client Registry of its own (never the global one),
 * built on the first scrape, whose metrics read the recorder's numbers and the gauges' sources
 * (hash pool, outbox) when scraped. prom-client is imported here only, on that first scrape:
 * loading it costs about 12 MB of resident memory and 100–250 ms, which a service that is never
 * scraped should not pay (the peak RSS target is 150 MB, DESIGN §10).
 */
import type { Metric, MetricObjectWithValues, MetricType, MetricValueWithName, Registry } from 'prom-client';
import type { Logger } from '../logger.js';
import { LATENCY_BUCKETS_SECONDS, type MetricsRecorder } from './recorder.js';

export interface ScrapeSources {
  recorder: MetricsRecorder;
  /** The hashing threads' load now (credentials/hash-pool.ts). */
  hashPool: () => { queued: number; running: number };
  /** Outbox rows by status, from one grouped query; rejects on failure or timeout. */
  outboxBacklog: () => Promise<ReadonlyMap<string, number>>;
  /** The capabilities' own metrics (webhooks), added while they are built, before any scrape. */
  extensions: readonly MetricsExtension[];
  logger: Logger;
}

/** Metrics a capability brings to /metrics (src/webhooks/metrics.ts): the registry knows none by name. */
export interface MetricsExtension {
  /** Registers its metrics on the registry, which the first scrape builds. */
  register(prom: PromClient, registry: Registry): void;
  /** At the start of each scrape, before collecting: one read shared by several gauges. */
  beforeScrape?(): void;
}

export interface MetricsExposition {
  contentType: string;
  text: string;
}

/** The outbox statuses (db/outbox-store.ts): each is reported, at 0 when there is none. */
const OUTBOX_STATUSES = ['queued', 'sending', 'sent', 'dead', 'expired'] as const;

/** The outbox's counts of one scrape, asked once and read by two gauges; null when the query failed. */
type OutboxCount = Promise<ReadonlyMap<string, number> | null>;

export function createScraper(sources: ScrapeSources): () => Promise<MetricsExposition> {
  let registry: Promise<Registry> | null = null;
  let outboxCount: OutboxCount = Promise.resolve(null);
  const scrapeState = { outboxCount: () => outboxCount };
  return async () => {
    registry ??= buildRegistry(sources, scrapeState);
    const built = await registry;
    outboxCount = sources.outboxBacklog().catch((error: unknown) => {
      sources.logger.warn({ err: error }, 'metrics: the outbox could not be counted');
      return null;
    });
    for (const extension of sources.extensions) extension.beforeScrape?.();
    return { contentType: built.contentType, text: await built.metrics() };
  };
}

async function buildRegistry(sources: ScrapeSources, scrape: { outboxCount: () => OutboxCount }): Promise<Registry> {
  const prom = (await import('prom-client')).default;
  const registry = new prom.Registry();
  prom.collectDefaultMetrics({ register: registry });
  // The registry prints metrics in the order they were registered: kept as /metrics has always listed them.
  registerRequestMetrics(prom, registry, sources.recorder);
  registerSignInMetrics(prom, registry, sources.recorder);
  registerHashPoolGauges(prom, registry, sources.hashPool);
  registerOutboxGauges(prom, registry, scrape.outboxCount);
  for (const extension of sources.extensions) extension.register(prom, registry);
  return registry;
}

/** prom-client itself, loaded by the first scrape (see the module comment). */
export type PromClient = typeof import('prom-client');

function registerRequestMetrics(prom: PromClient, registry: Registry, recorder: MetricsRecorder): void {
  new prom.Counter({
    name: 'gatehouse_http_requests_total',
    help: 'HTTP requests answered, by route pattern (unmatched: no route), method and status.',
    labelNames: ['route', 'method', 'status'],
    registers: [registry],
    collect() {
      this.reset();
      for (const s of recorder.requests()) this.inc({ route: s.route, method: s.method, status: s.status }, s.count);
    },
  });
  registry.registerMetric(requestDurationHistogram(recorder));
}

/** Sign-in attempts, login locks and rate-limit refusals, as the recorder counted them. */
function registerSignInMetrics(prom: PromClient, registry: Registry, recorder: MetricsRecorder): void {
  new prom.Counter({
    name: 'gatehouse_logins_total',
    help: 'Sign-in attempts by result (success, failure, locked, rate_limited, mfa_required) and method (password, email_link, email_code, oauth, totp, recovery_code, ...).',
    labelNames: ['result', 'method'],
    registers: [registry],
    collect() {
      this.reset();
      for (const { result, method, count } of recorder.logins.values()) this.inc({ result, method }, count);
    },
  });
  new prom.Counter({
    name: 'gatehouse_login_locks_started_total',
    help: 'Login locks started: a failure that reached LOCKOUT_MAX_FAILURES for an email, an IP or a device.',
    registers: [registry],
    collect() {
      this.reset();
      this.inc(recorder.locksStarted());
    },
  });
  new prom.Counter({
    name: 'gatehouse_rate_limit_refusals_total',
    help: 'Requests refused 429 by a rate limit, by the limit (RATE_LIMIT_* in docs/configuration.md).',
    labelNames: ['limit'],
    registers: [registry],
    collect() {
      this.reset();
      for (const [limit, count] of recorder.refusals) this.inc({ limit }, count);
    },
  });
}

function registerHashPoolGauges(prom: PromClient, registry: Registry, hashPool: ScrapeSources['hashPool']): void {
  new prom.Gauge({
    name: 'gatehouse_hash_pool_queue_depth',
    help: 'Password hashing jobs waiting for a hashing thread.',
    registers: [registry],
    collect() {
      this.set(hashPool().queued);
    },
  });
  new prom.Gauge({
    name: 'gatehouse_hash_pool_busy_threads',
    help: 'Hashing threads running a bcrypt job.',
    registers: [registry],
    collect() {
      this.set(hashPool().running);
    },
  });
}

/** Both read the one count this scrape asked for (`createScraper`). */
function registerOutboxGauges(prom: PromClient, registry: Registry, outboxCount: () => OutboxCount): void {
  new prom.Gauge({
    name: 'gatehouse_outbox_query_up',
    help: '1 when this scrape counted the outbox, 0 when its query failed or took longer than 1 s.',
    registers: [registry],
    async collect() {
      this.set((await outboxCount()) === null ? 0 : 1);
    },
  });
  new prom.Gauge({
    name: 'gatehouse_outbox_emails',
    help: 'Emails in the outbox by status (queued and sending are the backlog; dead ones gave up); absent when the count failed.',
    labelNames: ['status'],
    registers: [registry],
    async collect() {
      this.reset();
      const counts = await outboxCount();
      if (counts === null) return;
      for (const status of new Set([...OUTBOX_STATUSES, ...counts.keys()])) this.set({ status }, counts.get(status) ?? 0);
    },
  });
}

/**
 * The latency histogram, read from the recorder's buckets at scrape time. prom-client's Histogram
 * can only be fed one observation at a time (which would put prom-client on the request path), so
 * this is a metric in the shape prom-client's Registry reads from its own metrics: `get()`
 * returning the series, with the `_bucket`, `_sum` and `_count` lines Prometheus expects.
 */
function requestDurationHistogram(recorder: MetricsRecorder): Metric {
  const name = 'gatehouse_http_request_duration_seconds';
  const les = [...LATENCY_BUCKETS_SECONDS.map(String), '+Inf'];
  const histogram = {
    name,
    help: 'Time from a request reaching Gatehouse to its answer being ready, by route pattern, method and status.',
    type: 'histogram',
    aggregator: 'sum',
    async get(): Promise<MetricObjectWithValues<MetricValueWithName<string>>> {
      const values: MetricValueWithName<string>[] = [];
      for (const s of recorder.requests()) {
        const labels = { route: s.route, method: s.method, status: s.status };
        let cumulative = 0;
        for (let i = 0; i < les.length; i++) {
          cumulative += s.buckets[i] ?? 0;
          values.push({ metricName: `${name}_bucket`, labels: { ...labels, le: les[i] }, value: cumulative });
        }
        values.push({ metricName: `${name}_sum`, labels, value: s.sumSeconds });
        values.push({ metricName: `${name}_count`, labels, value: s.count });
      }
      return {
        name,
        help: histogram.help, // prom-client's typings declare a numeric enum; its Registry prints the string.
        type: 'histogram' as unknown as MetricType,
        aggregator: 'sum',
        collect: () => undefined,
        values,
      };
    },
  };
  return histogram as unknown as Metric;
}
