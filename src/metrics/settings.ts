/** @module The metrics' settings: who may read GET /metrics, and how often. */
import { defineSettings } from '../settings.js';

export interface MetricsSettings {
  /** METRICS_TOKEN: the bearer token GET /metrics requires; null: /metrics is open (docs/metrics.md). */
  metricsToken: string | null;
  /** METRICS_PUBLIC=true: production may run with /metrics open (no METRICS_TOKEN), on purpose. */
  metricsPublic: boolean;
}

export const metricsSettings = defineSettings({
  name: 'metrics',
  variables: [
    {
      name: 'METRICS_TOKEN',
      default: '',
      meaning: 'bearer token that GET /metrics requires, at least 16 characters (unset: /metrics is open; production then needs METRICS_PUBLIC=true)',
    },
    {
      name: 'METRICS_PUBLIC',
      default: 'false',
      meaning: 'true lets production run with /metrics open to anyone who reaches the server (no METRICS_TOKEN); refused otherwise',
    },
  ],
  rateLimits: {
    // Every scrape, counted before the token and in each instance's memory (gatehouse.ts): each one
    // reads the outbox and renders every metric, so an open /metrics must not be a cheap way to load
    // the database. A Prometheus pair scraping every 15 s asks each instance 8 times a minute.
    metrics: {
      name: 'RATE_LIMIT_METRICS',
      default: '60/1m',
      meaning: 'GET /metrics requests per client IP and per instance (in its memory), counted before the token is checked (a wrong token counts too)',
    },
  },
  read: (reader, { mode }): MetricsSettings => {
    const metricsToken = reader.read('METRICS_TOKEN') ?? null;
    if (metricsToken !== null && metricsToken.length < 16) {
      reader.problem('METRICS_TOKEN: must be at least 16 characters (for example: openssl rand -base64 32)');
    }
    const metricsPublic = reader.boolean('METRICS_PUBLIC', false);
    if (mode === 'production' && metricsToken === null && !metricsPublic) {
      reader.problem(
        'METRICS_TOKEN: required in production, or /metrics would be open to anyone who reaches the server; set it (for example: openssl rand -base64 32), or set METRICS_PUBLIC=true to leave /metrics open on purpose (kept off the public network)',
      );
    }
    return { metricsToken, metricsPublic };
  },
});
