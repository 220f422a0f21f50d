/**
 * @module createApp(deps): the one Hono app. The whole routing table and its edges (body limit,
 * request context, errors) are readable here; each feature brings its own sub-app.
 */
import { randomUUID } from 'node:crypto';
import { Hono, type MiddlewareHandler } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { HTTPException } from 'hono/http-exception';
import { z } from 'zod';
import type { AccountDeps } from './account/flow.js';
import type { AdminRouteDeps } from './admin/routes.js';
import { adminRouteDocs, createAdminRoutes } from './admin/routes.js';
import { accountRouteDocs, createAccountRoutes } from './account/routes.js';
import type { BackgroundTasks } from './background.js';
import type { Clock } from './clock.js';
import type { Config } from './config.js';
import type { DatabaseHandle } from './db/connect.js';
import { isDatabaseUnavailable } from './db/errors.js';
import { AppError } from './errors.js';
import { jsonAnswer, mergeAnswerHeaders, setAnswerHeader, startAnswer } from './http/answer.js';
import { resolveClientIp } from './http/client-ip.js';
import { createOriginRules } from './http/cross-site.js';
import type { AppEnv } from './http/env.js';
import { MAX_BODY_BYTES, payloadTooLarge } from './http/json-body.js';
import { createOpenApiRoutes, openApiRouteDocs } from './http/openapi.js';
import type { RouteDoc, RouteDocGroup } from './http/route-docs.js';
import { securityHeaders } from './http/security-headers.js';
import type { DeviceCookieSettings } from './limits/device-cookie.js';
import type { RateLimits } from './limits/rate-limits.js';
import type { Logger } from './logger.js';
import { createMetricsRoutes, measureRequests, metricsRouteDocs } from './metrics/http.js';
import type { Metrics } from './metrics/metrics.js';
import type { ChallengeCookieSettings } from './mfa/challenge.js';
import type { MfaDeps } from './mfa/flow.js';
import { createMfaRoutes, mfaRouteDocs } from './mfa/routes.js';
import { describeEmailSignInLink, type EmailSignInDeps } from './email-sign-in/flow.js';
import { createEmailSignInRoutes, emailSignInRouteDocs } from './email-sign-in/routes.js';
import { describeVerificationLink, type VerificationDeps } from './email-verification/flow.js';
import { createVerificationRoutes, verificationRouteDocs } from './email-verification/routes.js';
import type { OAuthFlowDeps } from './oauth/flow.js';
import { createOAuthRoutes, oauthRouteDocs } from './oauth/routes.js';
import type { PasskeyCookieSettings } from './passkeys/challenge.js';
import type { PasskeyDeps } from './passkeys/flow.js';
import { createPasskeyRoutes, passkeyRouteDocs } from './passkeys/routes.js';
import type { PasswordFlowDeps } from './password-sign-in/flow.js';
import { createPasswordRoutes, passwordRouteDocs } from './password-sign-in/routes.js';
import type { ResetDeps } from './password-reset/flow.js';
import { createResetRoutes, resetRouteDocs } from './password-reset/routes.js';
import type { SessionCookieSettings } from './session/cookie.js';
import type { SessionDeps } from './session/flow.js';
import { createSessionRoutes, sessionRouteDocs } from './session/routes.js';
import { createWebRoutes, webRouteDocs } from './web/routes.js';

const MAX_USER_AGENT_CHARS = 512;

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
 * Every route's description for the OpenAPI document, with the prefix app.ts mounts it at (the
 * routes below); test/openapi.test.ts holds it against the app's routing table.
 */
export const ROUTE_DOC_GROUPS: readonly RouteDocGroup[] = [
  { prefix: '', docs: appRouteDocs },
  { prefix: '', docs: metricsRouteDocs },
  { prefix: '', docs: openApiRouteDocs },
  { prefix: '/api/auth', docs: passwordRouteDocs },
  { prefix: '/api/auth', docs: sessionRouteDocs },
  { prefix: '/api/auth', docs: accountRouteDocs },
  { prefix: '/api/auth', docs: mfaRouteDocs },
  { prefix: '/api/auth', docs: verificationRouteDocs },
  { prefix: '/api/auth', docs: resetRouteDocs },
  { prefix: '/api/auth', docs: emailSignInRouteDocs },
  { prefix: '', docs: webRouteDocs },
  { prefix: '/api/auth', docs: oauthRouteDocs },
  { prefix: '/api/auth', docs: passkeyRouteDocs },
  // Mounted only while ADMIN_API_KEY is set; documented always (the document says so).
  { prefix: '/api/admin', docs: adminRouteDocs },
];

export interface AppDeps {
  config: Readonly<Config>;
  clock: Clock;
  logger: Logger;
  /** Counts every answer (the first middleware) and serves GET /metrics (counted by RATE_LIMIT_METRICS). */
  metrics: Pick<Metrics, 'recorder' | 'token' | 'scrape'> & { limits: RateLimits };
  database: Pick<DatabaseHandle, 'ping'>;
  cookie: SessionCookieSettings;
  deviceCookie: DeviceCookieSettings;
  session: SessionDeps;
  /** Whether the service can serve, for /readyz (gatehouse.ts gives operators the detail). */
  readiness: () => Promise<{ status: 'ready' | 'degraded' | 'unavailable' }>;
  password: PasswordFlowDeps;
  verification: VerificationDeps;
  reset: ResetDeps;
  background: BackgroundTasks;
  oauth: OAuthFlowDeps;
  account: AccountDeps;
  mfa: MfaDeps;
  emailSignIn: EmailSignInDeps;
  challengeCookie: ChallengeCookieSettings;
  passkeys: PasskeyDeps;
  passkeyCookie: PasskeyCookieSettings;
  /** The admin API; null (ADMIN_API_KEY unset): not mounted, so /api/admin/* is the plain 404. */
  admin: AdminRouteDeps | null;
}

function errorBody(error: AppError): Record<string, unknown> {
  return error.issues ? { error: error.code, message: error.message, issues: error.issues } : { error: error.code, message: error.message };
}

export function createApp(deps: AppDeps): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  app.use('*', measureRequests(deps.metrics.recorder));

  // Every answer carries these (health checks, redirects, 404s and errors too); a page replaces
  // the Content-Security-Policy with its own. Recorded before the handler runs, as a plain record
  // (http/answer.ts says why).
  const securityHeaderRecord = Object.fromEntries(
    securityHeaders({
      contentSecurityPolicy: "default-src 'none'; frame-ancestors 'none'",
      httpsBaseUrl: deps.config.httpsBaseUrl,
    }),
  );
  // Other sites may neither change state nor read answers, except the trusted front ends
  // (http/cross-site.ts); checked in the first middlewares, before any route does work.
  const origins = createOriginRules({ ownOrigin: new URL(deps.config.baseUrl).origin, trustedOrigins: deps.config.trustedOrigins });
  const requestContext: MiddlewareHandler<AppEnv> = async (c, next) => {
    const requestId = randomUUID();
    startAnswer(c, { 'X-Request-Id': requestId, ...securityHeaderRecord });
    c.set('requestContext', {
      ip: resolveClientIp({
        remoteAddress: c.env?.remoteAddress,
        readForwardedFor: () => c.req.header('x-forwarded-for'),
        trustProxyHops: deps.config.trustProxyHops,
      }),
      userAgent: c.req.header('user-agent')?.slice(0, MAX_USER_AGENT_CHARS) ?? null,
      now: deps.clock.now(),
      requestId,
    });
    origins.refuseCrossSite(c);
    await next();
    mergeAnswerHeaders(c);
  };
  app.use('*', requestContext);

  const limitBody = bodyLimit({
    maxSize: MAX_BODY_BYTES,
    onError: () => {
      throw payloadTooLarge();
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
    return limitBody(c, next);
  };
  app.use('/api/*', apiEdges);

  app.get('/healthz', (c) => jsonAnswer(c, { status: 'ok' }));
  app.get('/readyz', async (c) => {
    // Only the status: which stores answer, and which do not, is for operators (`readiness()`).
    // Degraded (the limits count in memory) still serves, so it stays in rotation (200).
    const { status } = await deps.readiness();
    return jsonAnswer(c, { status }, status === 'unavailable' ? 503 : 200);
  });

  app.route('/', createMetricsRoutes(deps.metrics));
  app.route(
    '/',
    createOpenApiRoutes({
      groups: () => ROUTE_DOC_GROUPS,
      settings: { baseUrl: deps.config.baseUrl, sessionCookieName: deps.cookie.name, challengeCookieName: deps.challengeCookie.name },
    }),
  );

  // Tokens in answers: development mode, and only with a loopback BASE_URL (config.ts, devConveniences).
  const devMode = deps.config.mode === 'development' && deps.config.devConveniences;
  // A right first factor that needs a second one has no audit row of its own: counted here.
  const countMfaRequired = (firstMethod: string): void => deps.metrics.recorder.login('mfa_required', firstMethod);
  app.route(
    '/api/auth',
    createPasswordRoutes({
      flow: deps.password,
      cookie: deps.cookie,
      deviceCookie: deps.deviceCookie,
      devMode,
      challenge: { key: deps.mfa.challengeKey, random: deps.mfa.random, cookie: deps.challengeCookie, onIssued: countMfaRequired },
    }),
  );
  app.route('/api/auth', createSessionRoutes({ session: deps.session, cookie: deps.cookie, audit: deps.account.stores.audit }));
  app.route('/api/auth', createAccountRoutes({ flow: deps.account, session: deps.session, cookie: deps.cookie, devMode }));
  app.route('/api/auth', createMfaRoutes({ flow: deps.mfa, session: deps.session, cookie: deps.cookie, challengeCookie: deps.challengeCookie }));
  app.route('/api/auth', createVerificationRoutes({ flow: deps.verification, session: deps.session, cookie: deps.cookie, devMode }));
  app.route('/api/auth', createResetRoutes({ flow: deps.reset, devMode, background: deps.background }));
  app.route(
    '/api/auth',
    createEmailSignInRoutes({
      flow: deps.emailSignIn,
      devMode,
      background: deps.background,
      cookie: deps.cookie,
      challenge: { key: deps.mfa.challengeKey, random: deps.mfa.random, cookie: deps.challengeCookie, onIssued: countMfaRequired },
    }),
  );
  app.route(
    '/api/auth',
    createPasskeyRoutes({
      flow: deps.passkeys,
      session: deps.session,
      cookie: deps.cookie,
      passkeyCookie: deps.passkeyCookie,
      challenge: { key: deps.mfa.challengeKey, random: deps.mfa.random, cookie: deps.challengeCookie, onIssued: countMfaRequired },
    }),
  );
  // The pages (DESIGN §7) and their static assets, with their own headers (src/web/routes.ts).
  app.route(
    '/',
    createWebRoutes({
      config: deps.config,
      session: deps.session,
      cookie: deps.cookie,
      describeVerificationLink: (token, now) => describeVerificationLink(deps.verification, token, now),
      describeEmailSignInLink: (token, now) => describeEmailSignInLink(deps.emailSignIn, token, now),
    }),
  );
  app.route(
    '/api/auth',
    createOAuthRoutes({
      flow: deps.oauth,
      cookie: deps.cookie,
      loginPageUrl: deps.config.loginPageUrl,
      challenge: { key: deps.mfa.challengeKey, random: deps.mfa.random, cookie: deps.challengeCookie, onIssued: countMfaRequired },
    }),
  );

  if (deps.admin !== null) app.route('/api/admin', createAdminRoutes(deps.admin));

  app.notFound((c) => jsonAnswer(c, { error: 'not_found', message: `No route for ${c.req.method} ${c.req.path}.` }, 404));

  app.onError((error, c) => {
    const requestId = c.get('requestContext')?.requestId ?? randomUUID();
    if (error instanceof AppError) {
      if (error.retryAfterSeconds !== undefined) setAnswerHeader(c, 'Retry-After', String(error.retryAfterSeconds));
      return jsonAnswer(c, errorBody(error), error.status);
    }
    if (error instanceof HTTPException && error.status < 500) {
      return jsonAnswer(c, { error: 'validation_error', message: 'The request could not be read.' }, 400);
    }
    if (isDatabaseUnavailable(error)) {
      deps.logger.warn({ requestId, code: (error as { code?: unknown }).code }, 'database unavailable');
      setAnswerHeader(c, 'Retry-After', '5');
      return jsonAnswer(c, { error: 'service_unavailable', message: 'The service is temporarily unavailable. Try again shortly.', requestId }, 503);
    }
    deps.logger.error({ requestId, err: error }, 'unhandled error');
    return jsonAnswer(c, { error: 'internal_error', message: 'Something went wrong on our side.', requestId }, 500);
  });

  return app;
}
