/**
 * @module The session check's fast path: `GET /api/auth/session` and `GET /api/auth/forward`
 * answered on Node's request objects, before the Web-standard app, by `gatehouse serve`.
 *
 * The session check is the request every application behind Gatehouse makes on every page; the
 * app's layers around it (the adapter's Request and Response, the router, the middlewares) cost
 * more than the check itself (docs/performance.md has the profiles). This answers the same bytes
 * the app answers — the same status, headers and body; `test/session-fast-path.test.ts` compares
 * the two — with the same check (`validateSessionToken`: the token, its row, the account, so a
 * revoked session is refused at once), the same request metrics and the same refusal log line.
 *
 * It takes only the plain case and hands everything else to the app untouched: a query string, a
 * CORS request (an `Origin` header), an X-Forwarded-For the app would warn about, a Host header
 * the adapter refuses (its 400 `malformed_request`), and any failure
 * of the check (the database down: the app answers its 503).
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { parse as parseCookies } from 'hono/utils/cookie';
import type { FastHandler, FastRoute } from '../capability.js';
import type { Clock } from '../clock.js';
import { isWellFormedHost, jsonAnswerHeaders, writeFastAnswer, type FastAnswer, type FastAnswerDeps } from '../http/fast-answer.js';
import type { SessionCookieSettings } from './cookie.js';
import { validateSessionToken, type SessionDeps, type ValidSession } from './flow.js';
import { NOT_SIGNED_IN } from './read-session.js';
import { forwardHeaders, sessionAnswer } from './routes.js';

export const SESSION_PATH = '/api/auth/session';
export const FORWARD_PATH = '/api/auth/forward';

const NOT_AUTHENTICATED_BODY = JSON.stringify({ error: 'not_authenticated', message: NOT_SIGNED_IN });

export interface SessionFastPathDeps extends FastAnswerDeps {
  session: SessionDeps;
  cookie: SessionCookieSettings;
  clock: Clock;
  /** TRUST_PROXY: with 0, an X-Forwarded-For goes to the app, which says once in the log that it is ignored. */
  trustProxyHops: number;
}

export function sessionFastRoute(deps: SessionFastPathDeps): FastRoute {
  const session = answerer(deps, SESSION_PATH, sessionAnswers);
  const forward = answerer(deps, FORWARD_PATH, forwardAnswers);
  return (incoming) => {
    if (incoming.method !== 'GET') return null;
    const handler = incoming.url === SESSION_PATH ? session : incoming.url === FORWARD_PATH ? forward : null;
    if (handler === null) return null;
    const { headers } = incoming;
    if (headers.origin !== undefined || !isWellFormedHost(headers.host)) return null;
    if (deps.trustProxyHops === 0 && headers['x-forwarded-for'] !== undefined) return null;
    return handler;
  };
}

type Answers = (base: Record<string, string>, valid: ValidSession | null) => FastAnswer;

/** GET /session: the session as JSON, or the 401 in the error shape. */
const sessionAnswers: Answers = (base, valid) =>
  valid === null
    ? { status: 401, headers: jsonAnswerHeaders(base, NOT_AUTHENTICATED_BODY), body: NOT_AUTHENTICATED_BODY }
    : answerJson(base, JSON.stringify(sessionAnswer(valid)));

/** GET /forward: who it is in headers and no body, or the 401 in the error shape; never cached on the way. */
const forwardAnswers: Answers = (base, valid) => {
  const headers = { ...base, 'Cache-Control': 'no-store' };
  if (valid === null) return { status: 401, headers: jsonAnswerHeaders(headers, NOT_AUTHENTICATED_BODY), body: NOT_AUTHENTICATED_BODY };
  return { status: 200, headers: { ...headers, ...forwardHeaders(valid) }, body: null };
};

function answerJson(base: Record<string, string>, body: string): FastAnswer {
  return { status: 200, headers: jsonAnswerHeaders(base, body), body };
}

function answerer(deps: SessionFastPathDeps, route: string, answers: Answers): FastHandler {
  return async (incoming: IncomingMessage, outgoing: ServerResponse, closing: () => boolean): Promise<boolean> => {
    const startedAt = performance.now();
    const cookieHeader = incoming.headers.cookie;
    const token = cookieHeader === undefined ? undefined : parseCookies(cookieHeader, deps.cookie.name)[deps.cookie.name];
    let valid: ValidSession | null = null;
    if (token !== undefined && token !== '') {
      try {
        valid = await validateSessionToken(deps.session, token, deps.clock.now());
      } catch {
        // The database failed: the app checks again and answers its 503 (or its 500), as always.
        return false;
      }
    }
    const requestId = randomUUID();
    const answer = answers({ 'X-Request-Id': requestId, ...deps.apiHeaders }, valid);
    writeFastAnswer(deps, outgoing, { route, method: 'GET', requestId, startedAt, closing: closing() }, answer);
    return true;
  };
}
