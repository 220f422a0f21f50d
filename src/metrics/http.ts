/**
 * @module The metrics' HTTP edge: the middleware that counts every answer by route pattern, and
 * GET /metrics, open or behind METRICS_TOKEN (a bearer token, compared in constant time), each
 * request first counted against RATE_LIMIT_METRICS per client IP.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { Hono, type Context, type MiddlewareHandler } from 'hono';
import { matchedRoutes } from 'hono/route';
import { unauthorized } from '../errors.js';
import { setAnswerHeader } from '../http/answer.js';
import type { AppEnv } from '../http/env.js';
import type { RouteDoc } from '../http/route-docs.js';
import type { RateLimits } from '../limits/rate-limits.js';
import type { MetricsRecorder } from './recorder.js';
import type { MetricsExposition } from './registry.js';

/** The route label of a request no route matched (a 404 of the fallback, a probe for /wp-admin). */
export const UNMATCHED_ROUTE = 'unmatched';

/**
 * The pattern of the route this request matched (`/api/auth/account/sessions/:id`), whoever
 * answered it (a route, or a middleware before it: a cross-site refusal, a preflight); never the
 * raw path, so a client cannot grow the label set. Middlewares (`app.use`) are registered for
 * every method (`ALL`); the last route of another method is the one that matched.
 */
export function routePatternOf(c: Context<AppEnv>): string {
  const routes = matchedRoutes(c);
  for (let i = routes.length - 1; i >= 0; i--) {
    const route = routes[i];
    if (route !== undefined && route.method !== 'ALL') return route.path;
  }
  return UNMATCHED_ROUTE;
}

/** Counts each answer; first in the chain, so it also times the other middlewares and errors. */
export function measureRequests(recorder: MetricsRecorder): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const start = performance.now();
    await next();
    recorder.observeRequest(routePatternOf(c), c.req.method, c.res.status, (performance.now() - start) / 1000);
  };
}

const digest = (value: string): Buffer => createHash('sha256').update(value).digest();

export interface MetricsRouteDeps {
  /** METRICS_TOKEN; null: the endpoint is open. */
  token: string | null;
  scrape: () => Promise<MetricsExposition>;
  limits: RateLimits;
}

export function createMetricsRoutes(deps: MetricsRouteDeps): Hono<AppEnv> {
  // Both sides hashed to the same length first, so the comparison's time says nothing of the token.
  const expected = deps.token === null ? null : digest(deps.token);
  return new Hono<AppEnv>().get('/metrics', async (c) => {
    const ctx = c.get('requestContext');
    // Before the token: wrong tokens are refused as cheaply as scrapes are served, and both bounded.
    await deps.limits.consume('metrics', { ip: ctx.ip }, ctx.now);
    if (expected !== null) {
      const header = c.req.header('authorization') ?? '';
      const given = header.startsWith('Bearer ') ? header.slice('Bearer '.length) : '';
      if (!timingSafeEqual(digest(given), expected)) {
        setAnswerHeader(c, 'WWW-Authenticate', 'Bearer realm="metrics"');
        throw unauthorized('not_authenticated', 'GET /metrics needs Authorization: Bearer <METRICS_TOKEN>.');
      }
    }
    const { contentType, text } = await deps.scrape();
    return c.body(text, 200, { 'Content-Type': contentType, 'Cache-Control': 'no-store' });
  });
}

export const metricsRouteDocs: RouteDoc[] = [
  {
    method: 'get',
    path: '/metrics',
    tag: 'Operations',
    summary: 'Prometheus metrics (docs/metrics.md); behind METRICS_TOKEN when it is set',
    auth: 'metrics-token',
    answers: [{ status: 200, description: 'The Prometheus text format, version 0.0.4.', mediaType: 'text/plain' }],
    errors: ['rate_limited'],
  },
];
