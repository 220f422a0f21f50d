/**
 * @module createApp(deps): the one Hono app. Its edges (request context, security headers, the
 * cross-site rules, the body limit, errors) and the operations routes are here; every capability
 * brings its own routes (src/capabilities.ts lists them, in the order they are mounted).
 */
import { getCookie } from 'hono/cookie';
import type { Language } from './i18n/languages.js';
import { LANGUAGE_COOKIE, requestLanguage } from './i18n/negotiate.js';
import { randomUUID } from 'node:crypto';
import { Hono, type Context, type MiddlewareHandler } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { HTTPException } from 'hono/http-exception';
import { z } from 'zod';
import { CAPABILITIES } from './capabilities.js';
import type { MountedRoutes } from './capability.js';
import { AppError } from './errors.js';
import { createAllowedMethods } from './http/method-not-allowed.js';
import { jsonAnswer, mergeAnswerHeaders, setAnswerHeader, startAnswer } from './http/answer.js';
import { resolveClientIp } from './http/client-ip.js';
import { createOriginRules } from './http/cross-site.js';
import type { AppEnv } from './http/env.js';
import { MAX_BODY_BYTES, payloadTooLarge } from './http/json-body.js';
import { createOpenApiRoutes, openApiRouteDocs } from './http/openapi.js';
import type { RouteDoc, RouteDocGroup } from './http/route-docs.js';
import { apiSecurityHeaders } from './http/security-headers.js';
import type { RateLimits } from './limits/rate-limits.js';
import type { Logger } from './logger.js';
import { createMetricsRoutes, measureRequests, metricsRouteDocs } from './metrics/http.js';
import type { SharedParts } from './parts.js';
import { MAX_USER_AGENT_CHARS } from './request-context.js';
import { errorAnswerOf } from './http/error-answer.js';
import { MAX_IMPORT_BODY_BYTES, USER_IMPORT_PATH } from './user-transfer/body.js';

const appRouteDocs: RouteDoc[] = [
  {
    method: 'get',
    path: '/healthz',
    tag: 'Operations',
    summary: 'Liveness: 200 while the process is up',
    answers: [{ status: 200, description: 'Up.', json: z.object({ status: z.literal('ok') }) }],
  },
  {
    method: 'get',
    path: '/readyz',
    tag: 'Operations',
    summary: 'Readiness: whether the database and the limiter store answer',
    answers: [
      {
        status: 200,
        description: 'ready, or degraded (the limits count in memory; still serving).',
        json: z.object({ status: z.enum(['ready', 'degraded']) }),
      },
      { status: 503, description: 'The database does not answer.', json: z.object({ status: z.literal('unavailable') }) },
    ],
  },
];

/**
 * Every route's description for the OpenAPI document, with the prefix it is mounted at: the
 * operations routes, then each capability's (the admin API's too: documented always, mounted only
 * while ADMIN_API_KEY is set). test/openapi.test.ts holds it against the app's routing table.
 */
export const ROUTE_DOC_GROUPS: readonly RouteDocGroup[] = [
  { prefix: '', docs: appRouteDocs },
  { prefix: '', docs: metricsRouteDocs },
  { prefix: '', docs: openApiRouteDocs },
  ...CAPABILITIES.flatMap((capability) => capability.routeDocs),
];

export interface AppDeps {
  parts: Pick<SharedParts, 'config' | 'clock' | 'logger' | 'metrics' | 'cookie' | 'secondFactor'>;
  /** GET /metrics' own limit (RATE_LIMIT_METRICS), counted in this instance's memory. */
  scrapeLimits: RateLimits;
  /** Whether the service can serve, for /readyz (gatehouse.ts gives operators the detail). */
  readiness: () => Promise<{ status: 'ready' | 'degraded' | 'unavailable' }>;
  /** Every capability's routes, in the list's order. */
  routes: readonly MountedRoutes[];
}

export function createApp(deps: AppDeps): Hono<AppEnv> {
  const { config, metrics } = deps.parts;
  const app = new Hono<AppEnv>();
  app.use('*', measureRequests(metrics.recorder));
  installEdges(app, deps.parts);

  app.get('/healthz', (c) => jsonAnswer(c, { status: 'ok' }));
  app.get('/readyz', async (c) => {
    // Only the status: which stores answer, and which do not, is for operators (`readiness()`).
    // Degraded (the limits count in memory) still serves, so it stays in rotation (200).
    const { status } = await deps.readiness();
    return jsonAnswer(c, { status }, status === 'unavailable' ? 503 : 200);
  });
  app.route('/', createMetricsRoutes({ ...metrics, limits: deps.scrapeLimits }));
  app.route(
    '/',
    createOpenApiRoutes({
      groups: () => ROUTE_DOC_GROUPS,
      settings: { baseUrl: config.baseUrl, sessionCookieName: deps.parts.cookie.name, challengeCookieName: deps.parts.secondFactor.challenge.cookie.name },
    }),
  );
  for (const { prefix, routes } of deps.routes) app.route(prefix, routes);

  const allowedMethods = createAllowedMethods(() => app.routes);
  app.notFound((c) => {
    const allow = allowedMethods(c.req.path);
    if (allow.length === 0) return jsonAnswer(c, { error: 'not_found', message: `No route for ${c.req.method} ${c.req.path}.` }, 404);
    setAnswerHeader(c, 'Allow', allow.join(', '));
    return jsonAnswer(c, { error: 'method_not_allowed', message: `${c.req.path} does not take ${c.req.method}; it takes ${allow.join(', ')}.` }, 405);
  });
  app.onError(errorAnswer(deps.parts.logger));
  return app;
}

/**
 * With TRUST_PROXY=0 behind a proxy, every client is the proxy's address: one person's wrong
 * passwords lock everyone out, and the sign-up limit is one for the whole site. An X-Forwarded-For
 * that arrives then is ignored (anyone can send one), but said once in the log, with the fix.
 * Null when proxies are trusted; it stops looking after the first.
 */
function ignoredForwardedForWarning(parts: Pick<SharedParts, 'config' | 'logger'>): ((c: Context<AppEnv>) => void) | null {
  if (parts.config.trustProxyHops !== 0) return null;
  let warned = false;
  return (c) => {
    if (warned || c.req.header('x-forwarded-for') === undefined) return;
    warned = true;
    parts.logger.warn(
      { setting: 'TRUST_PROXY' },
      'A request arrived with X-Forwarded-For while TRUST_PROXY=0: the header is ignored and every client counts as the address it came from. Behind a reverse proxy, set TRUST_PROXY to the number of proxies in front (1 for one nginx), or every sign-in limit and lock counts the proxy as one client. (Said once.)',
    );
  };
}

/**
 * The middlewares every request passes: a request id and the `RequestContext` (client IP, user
 * agent, and `now`, read once from the clock), the security headers, the cross-site rules, and
 * for the API, CORS for trusted origins and the body limit.
 */
function installEdges(app: Hono<AppEnv>, parts: Pick<SharedParts, 'config' | 'clock' | 'logger'>): void {
  const { config, clock } = parts;
  const warnIgnoredForwardedFor = ignoredForwardedForWarning(parts);
  // Every answer carries these (health checks, redirects, 404s and errors too); a page replaces
  // the Content-Security-Policy with its own. Recorded before the handler runs, as a plain record
  // (http/answer.ts says why).
  const securityHeaderRecord = apiSecurityHeaders(config);
  // Other sites may neither change state nor read answers, except the trusted front ends
  // (http/cross-site.ts); checked in the first middlewares, before any route does work.
  const origins = createOriginRules({ ownOrigin: new URL(config.baseUrl).origin, trustedOrigins: config.trustedOrigins });
  const requestContext: MiddlewareHandler<AppEnv> = async (c, next) => {
    const requestId = randomUUID();
    startAnswer(c, { 'X-Request-Id': requestId, ...securityHeaderRecord });
    warnIgnoredForwardedFor?.(c);
    // The language is read only by the flows that remember it (a sign-up, a sign-in from a page):
    // parsed on first use, so the session check, which never asks, parses no cookie for it.
    let language: Language | null | undefined;
    c.set('requestContext', {
      ip: resolveClientIp({
        remoteAddress: c.env?.remoteAddress,
        readForwardedFor: () => c.req.header('x-forwarded-for'),
        trustProxyHops: config.trustProxyHops,
      }),
      userAgent: c.req.header('user-agent')?.slice(0, MAX_USER_AGENT_CHARS) ?? null,
      now: clock.now(),
      requestId,
      get language() {
        if (language === undefined) language = requestLanguage({ cookie: getCookie(c, LANGUAGE_COOKIE), acceptLanguage: c.req.header('accept-language') });
        return language;
      },
    });
    origins.refuseCrossSite(c);
    await next();
    mergeAnswerHeaders(c);
    // LOG_LEVEL=debug: one line per refused request, to see why a client gets its 4xx. The path
    // only: a query string may carry a token.
    const status = c.res.status;
    if (status >= 400 && status < 500) parts.logger.debug({ requestId, method: c.req.method, path: c.req.path, status }, 'request refused');
  };
  app.use('*', requestContext);

  const limitBody = bodyLimit({
    maxSize: MAX_BODY_BYTES,
    onError: () => {
      throw payloadTooLarge();
    },
  });
  // The user import alone takes a larger body (NDJSON, user-transfer/body.ts).
  const limitImportBody = bodyLimit({
    maxSize: MAX_IMPORT_BODY_BYTES,
    onError: () => {
      throw new AppError('payload_too_large', 413, `The import body must be at most ${MAX_IMPORT_BODY_BYTES} bytes (10 MiB).`);
    },
  });
  const apiEdges: MiddlewareHandler<AppEnv> = async (c, next) => {
    const preflight = origins.answerCors(c);
    if (preflight !== undefined) return preflight;
    // GET and HEAD carry no body. Skipping the check for them matters: reading `body` makes the
    // Node adapter build a full WHATWG Request, the largest cost of a session check. A host that
    // reads bodies itself (ConnectionInfo.readBody) gets the limit applied there, when a route
    // reads the body (http/json-body.ts).
    if (c.req.method === 'GET' || c.req.method === 'HEAD' || c.env?.readBody !== undefined) return next();
    return (c.req.path === USER_IMPORT_PATH ? limitImportBody : limitBody)(c, next);
  };
  app.use('/api/*', apiEdges);
}

/** Errors become answers by one rule (http/error-answer.ts); Hono's own refusal of an unreadable request is a 400. */
function errorAnswer(logger: Logger): Parameters<Hono<AppEnv>['onError']>[0] {
  return (error, c) => {
    if (error instanceof HTTPException && error.status < 500) {
      return jsonAnswer(c, { error: 'validation_error', message: 'The request could not be read.' }, 400);
    }
    const answer = errorAnswerOf(error, logger, c.get('requestContext')?.requestId ?? randomUUID());
    if (answer.retryAfterSeconds !== undefined) setAnswerHeader(c, 'Retry-After', String(answer.retryAfterSeconds));
    return jsonAnswer(c, answer.body, answer.status);
  };
}
