/**
 * @module The login's refusals on a fast path: `POST /api/auth/login` answered 400 (a body that is
 * not a login), 413 (too long) or 429 (an address this instance is already refusing under
 * RATE_LIMIT_LOGIN) on Node's objects, before the Web-standard app, by `gatehouse serve`.
 *
 * A flood of malformed or over-the-limit sign-ins is refused without a database read or a hash,
 * but each refusal still went through the app's layers (the adapter's Request and Response, the
 * router, the middlewares), which cost several times the refusal itself (docs/performance.md has
 * the profiles). This answers the same bytes as the app — status, headers and body;
 * `test/login-fast-path.test.ts` compares the two — in the same order of work: the body is read
 * and validated first (a malformed body is a 400 and spends nothing), then the limit refuses, and
 * the refusal is audited, counted in the metrics and logged as the app does.
 *
 * Every other sign-in goes on to the app with the body already read (node-body.ts
 * readNodeBodyAhead): a stream is read once. It leaves to the app, untouched, a request with an
 * `Origin` (the cross-site rules and CORS), one a browser marks cross-site, one that is not JSON
 * (the app's 415), an X-Forwarded-For the app would warn about, and a Host the adapter refuses.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AuditStore } from '../audit/audit-log.js';
import type { FastHandler, FastRoute } from '../capability.js';
import type { Clock } from '../clock.js';
import { resolveClientIp } from '../http/client-ip.js';
import { isWellFormedHost, jsonAnswerHeaders, writeFastAnswer, type FastAnswerDeps } from '../http/fast-answer.js';
import { AppError } from '../errors.js';
import { errorAnswerOf, type ErrorAnswer } from '../http/error-answer.js';
import { MAX_BODY_BYTES, isJsonContentType, parseJsonBody, payloadTooLarge } from '../http/json-body.js';
import type { RateLimits } from '../limits/rate-limits.js';
import { readNodeBodyAhead } from '../node-body.js';
import { MAX_USER_AGENT_CHARS } from '../request-context.js';
import { recordRateLimitedLogin } from './flow.js';
import { loginBody } from './routes.js';

export const LOGIN_PATH = '/api/auth/login';

export interface LoginFastPathDeps extends FastAnswerDeps {
  limits: Pick<RateLimits, 'refusedAlready'>;
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
    if (!isWellFormedHost(headers.host)) return null;
    if (headers.origin !== undefined || headers['sec-fetch-site'] === 'cross-site') return null;
    if (deps.trustProxyHops === 0 && headers['x-forwarded-for'] !== undefined) return null;
    // Node keeps the first of two Content-Types, the adapter joins them (and the app answers 415):
    // only a request that sends exactly one is taken.
    const contentType = incoming.headersDistinct['content-type'];
    return contentType?.length === 1 && isJsonContentType(contentType[0]) ? handler : null;
  };
}

function clientIp(deps: Pick<LoginFastPathDeps, 'trustProxyHops'>, incoming: IncomingMessage): string {
  return resolveClientIp({
    remoteAddress: incoming.socket.remoteAddress,
    // As the adapter reads it: repeated headers joined.
    readForwardedFor: () => incoming.headersDistinct['x-forwarded-for']?.join(', '),
    trustProxyHops: deps.trustProxyHops,
  });
}

function refusalAnswerer(deps: LoginFastPathDeps): FastHandler {
  return async (incoming: IncomingMessage, outgoing: ServerResponse, closing: () => boolean): Promise<boolean> => {
    const startedAt = performance.now();
    const now = deps.clock.now();
    const answer = ({ status, body: shape, retryAfterSeconds }: ErrorAnswer, requestId = randomUUID()): true => {
      const body = JSON.stringify(shape);
      const retryAfter: Record<string, string> = retryAfterSeconds === undefined ? {} : { 'Retry-After': String(retryAfterSeconds) };
      const headers = jsonAnswerHeaders({ 'X-Request-Id': requestId, ...deps.apiHeaders, ...retryAfter }, body);
      // A body too long is not read on: the connection closes after the answer, rather than
      // taking in the rest of what the client sends (the adapter drains a bounded amount).
      const close = closing() || status === 413;
      writeFastAnswer(deps, outgoing, { route: LOGIN_PATH, method: 'POST', requestId, startedAt, closing: close }, { status, headers, body });
      return true;
    };
    let email: string;
    try {
      const text = await readNodeBodyAhead(incoming, MAX_BODY_BYTES);
      if (text === null) return answer(errorAnswerOf(payloadTooLarge(), deps.logger, ''));
      ({ email } = parseJsonBody(loginBody, text, incoming.headers['content-type']));
    } catch (error) {
      if (error instanceof AppError) return answer(errorAnswerOf(error, deps.logger, ''));
      throw error;
    }
    const ip = clientIp(deps, incoming);
    // A sign-in from an address not refused goes on to the app, which counts it against the limit.
    const refusal = deps.limits.refusedAlready('login', { ip }, now);
    if (refusal === null) return false;
    const requestId = randomUUID();
    // As the adapter reads it: repeated User-Agent headers joined.
    const userAgent = incoming.headersDistinct['user-agent']?.join(', ').slice(0, MAX_USER_AGENT_CHARS) ?? null;
    try {
      await recordRateLimitedLogin(deps.audit, { ip, userAgent, now, requestId }, email);
    } catch (error) {
      // The app would answer this failure (a 503 for the database down), not run the login again.
      return answer(errorAnswerOf(error, deps.logger, requestId), requestId);
    }
    return answer(errorAnswerOf(refusal, deps.logger, requestId), requestId);
  };
}
