/**
 * @module The login's refusal fast path: `POST /api/auth/login` from an address this instance is
 * already refusing under RATE_LIMIT_LOGIN, answered on Node's objects before the Web-standard app,
 * by `gatehouse serve`.
 *
 * A flood of sign-ins over the limit is answered 429 without a database read or a hash, but each
 * refusal still went through the app's layers (the adapter's Request and Response, the router,
 * the middlewares), which cost several times the refusal itself (docs/performance.md has the
 * profiles). This answers the same bytes as the app — status, headers and body;
 * `test/login-fast-path.test.ts` compares the two — in the same order of work: the body is read
 * and validated first (a malformed body is a 400, not a 429, and spends nothing), then the
 * limit refuses, and the refusal is audited, counted in the metrics and logged as the app does.
 *
 * It looks at a request only while its address is being refused (a test of memory, counting
 * nothing), so a sign-in otherwise goes to the app untouched. Once it has read the body it
 * cannot give the stream back: whatever it does not answer itself (a body the app refuses, a
 * window that ended meanwhile) goes to the app with the body it read (node-body.ts readNodeBodyAhead).
 * It leaves to the app a request with an `Origin` (the cross-site rules and CORS), one a browser
 * marks cross-site, one that is not JSON, and an X-Forwarded-For the app would warn about.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AuditStore } from '../audit/audit-log.js';
import type { FastHandler, FastRoute } from '../capability.js';
import type { Clock } from '../clock.js';
import { resolveClientIp } from '../http/client-ip.js';
import { jsonAnswerHeaders, writeFastAnswer, type FastAnswerDeps } from '../http/fast-answer.js';
import { MAX_BODY_BYTES, isJsonContentType, parseJsonBody } from '../http/json-body.js';
import type { RateLimits } from '../limits/rate-limits.js';
import { readNodeBodyAhead } from '../node-body.js';
import { MAX_USER_AGENT_CHARS } from '../request-context.js';
import { recordRateLimitedLogin } from './flow.js';
import { loginBody } from './routes.js';

export const LOGIN_PATH = '/api/auth/login';

export interface LoginFastPathDeps extends FastAnswerDeps {
  limits: Pick<RateLimits, 'isRefusing' | 'refusedAlready'>;
  audit: AuditStore;
  clock: Clock;
  /** TRUST_PROXY: the client's address is resolved as the app resolves it. */
  trustProxyHops: number;
}

export function loginFastRoute(deps: LoginFastPathDeps): FastRoute {
  const handler = refusalAnswerer(deps);
  return (incoming) => {
    if (incoming.method !== 'POST' || incoming.url !== LOGIN_PATH) return null;
    const { headers } = incoming;
    if (headers.origin !== undefined || headers['sec-fetch-site'] === 'cross-site') return null;
    if (deps.trustProxyHops === 0 && headers['x-forwarded-for'] !== undefined) return null;
    if (!isJsonContentType(headers['content-type'])) return null;
    return deps.limits.isRefusing('login', { ip: clientIp(deps, incoming) }, deps.clock.now()) ? handler : null;
  };
}

function clientIp(deps: Pick<LoginFastPathDeps, 'trustProxyHops'>, incoming: IncomingMessage): string {
  return resolveClientIp({
    remoteAddress: incoming.socket.remoteAddress,
    readForwardedFor: () => {
      const forwardedFor = incoming.headers['x-forwarded-for'];
      return Array.isArray(forwardedFor) ? forwardedFor.join(', ') : forwardedFor;
    },
    trustProxyHops: deps.trustProxyHops,
  });
}

function refusalAnswerer(deps: LoginFastPathDeps): FastHandler {
  return async (incoming: IncomingMessage, outgoing: ServerResponse, closing: () => boolean): Promise<boolean> => {
    const startedAt = performance.now();
    const now = deps.clock.now();
    const ip = clientIp(deps, incoming);
    let email: string;
    try {
      const text = await readNodeBodyAhead(incoming, MAX_BODY_BYTES);
      if (text === null) return false;
      ({ email } = parseJsonBody(loginBody, text, incoming.headers['content-type']));
    } catch {
      // Unreadable, not JSON or not a login: the app answers its 400 from the same body.
      return false;
    }
    const refusal = deps.limits.refusedAlready('login', { ip }, now);
    // The window ended while the body came: the app counts the sign-in and goes on.
    if (refusal === null) return false;
    const requestId = randomUUID();
    const userAgent = incoming.headers['user-agent']?.slice(0, MAX_USER_AGENT_CHARS) ?? null;
    await recordRateLimitedLogin(deps.audit, { ip, userAgent, now, requestId }, email);
    const body = JSON.stringify({ error: refusal.code, message: refusal.message });
    const headers = jsonAnswerHeaders({ 'X-Request-Id': requestId, ...deps.apiHeaders, 'Retry-After': String(refusal.retryAfterSeconds) }, body);
    writeFastAnswer(deps, outgoing, { route: LOGIN_PATH, method: 'POST', requestId, startedAt, closing: closing() }, { status: 429, headers, body });
    return true;
  };
}
