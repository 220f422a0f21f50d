/**
 * @module Cross-site request rules (DESIGN §9.1): which origins may change state, and which get
 * CORS answers.
 *
 * A state-changing request (POST, PUT, PATCH, DELETE) is refused with 403 `forbidden_origin`
 * when the browser says it comes from another site (`Sec-Fetch-Site: cross-site`), or when it
 * names an `Origin` that is neither BASE_URL's nor one of TRUSTED_ORIGINS. A request with neither
 * header (curl, a server-side SDK, a mobile app) passes: it is not a browser acting for another
 * site, and the session cookie is SameSite=Lax anyway. A request whose `Origin` is ours or a
 * trusted one passes whatever `Sec-Fetch-Site` says (a trusted front end on another site). GET and
 * HEAD are never refused: the provider callback arrives by a cross-site navigation.
 *
 * This is what every browser since 2020 sends on every fetch and form POST, so the old defence —
 * "every POST must be JSON", which refused the spec's own bodyless logout — is no longer needed.
 *
 * The trusted origins, and only they, get CORS answers with credentials: the exact origin echoed
 * (never `*`), `Access-Control-Allow-Credentials: true`, `Vary: Origin`, and preflights for our
 * methods and `Content-Type`.
 */
import type { Context } from 'hono';
import { AppError } from '../errors.js';
import { addAnswerHeaders, jsonAnswer, setAnswerHeader } from './answer.js';
import type { AppEnv } from './env.js';

const STATE_CHANGING_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
const ALLOWED_METHODS = 'GET, HEAD, POST, PUT, PATCH, DELETE';
/** How long a browser may reuse a preflight answer, in seconds. */
const PREFLIGHT_MAX_AGE_SECONDS = '600';

export interface OriginRules {
  /** BASE_URL's origin: the pages' own. */
  ownOrigin: string;
  /** TRUSTED_ORIGINS: front ends on other origins that may call the API with credentials. */
  trustedOrigins: readonly string[];
}

export function forbiddenOrigin(origin: string | undefined, ownOrigin: string): AppError {
  const from = origin === undefined ? 'another site' : `the origin ${origin}`;
  return new AppError(
    'forbidden_origin',
    403,
    `This request comes from ${from}, which may not change anything here. Pages on ${ownOrigin} (BASE_URL) and the origins listed in TRUSTED_ORIGINS may.`,
  );
}

/**
 * The two rules as plain functions, called from the app's first middlewares rather than mounted
 * as middlewares of their own: each middleware layer costs every request a dispatch, and the
 * session check is the hot path of every application behind us (DESIGN §10).
 */
export function createOriginRules(rules: OriginRules): {
  /** Throws 403 forbidden_origin for a state-changing request from another site. Call before any work. */
  refuseCrossSite(c: Context<AppEnv>): void;
  /** Adds CORS headers for a trusted origin; answers a preflight. Without TRUSTED_ORIGINS it does nothing at all. */
  answerCors(c: Context<AppEnv>): Response | undefined;
} {
  const allowed = new Set([rules.ownOrigin, ...rules.trustedOrigins]);
  const trusted = new Set(rules.trustedOrigins);
  return {
    refuseCrossSite(c) {
      if (!STATE_CHANGING_METHODS.has(c.req.method)) return;
      const origin = c.req.header('origin');
      if (origin !== undefined) {
        if (!allowed.has(origin)) throw forbiddenOrigin(origin, rules.ownOrigin);
      } else if (c.req.header('sec-fetch-site') === 'cross-site') {
        throw forbiddenOrigin(undefined, rules.ownOrigin);
      }
    },
    answerCors(c) {
      if (trusted.size === 0) return undefined;
      // Every API answer differs by Origin once some origins get CORS headers: caches must know.
      setAnswerHeader(c, 'Vary', 'Origin');
      const origin = c.req.header('origin');
      const isTrusted = origin !== undefined && trusted.has(origin);
      if (c.req.method === 'OPTIONS' && c.req.header('access-control-request-method') !== undefined) {
        return preflightAnswer(c, isTrusted ? origin : undefined, rules.ownOrigin);
      }
      if (isTrusted) {
        addAnswerHeaders(c, {
          'Access-Control-Allow-Origin': origin,
          'Access-Control-Allow-Credentials': 'true',
          // Readable by the front end's script: the wait of a 429 and the id to quote in a report.
          'Access-Control-Expose-Headers': 'Retry-After, X-Request-Id',
        });
      }
      return undefined;
    },
  };
}

function preflightAnswer(c: Context<AppEnv>, trustedOrigin: string | undefined, ownOrigin: string): Response {
  if (trustedOrigin === undefined) {
    const refusal = forbiddenOrigin(c.req.header('origin'), ownOrigin);
    return jsonAnswer(c, { error: refusal.code, message: refusal.message }, refusal.status);
  }
  addAnswerHeaders(c, {
    'Access-Control-Allow-Origin': trustedOrigin,
    'Access-Control-Allow-Credentials': 'true',
    'Access-Control-Allow-Methods': ALLOWED_METHODS,
    'Access-Control-Allow-Headers': 'Content-Type',
    'Access-Control-Max-Age': PREFLIGHT_MAX_AGE_SECONDS,
  });
  // A response Hono builds: the answer record (these headers, the security set) is merged into it.
  return c.body(null, 204);
}
