/**
 * @module What the Node shell's fast paths share (session/fast-path.ts, password-sign-in/fast-path.ts):
 * the headers the app's edges give every API answer, and the writing of an answer with what the
 * app's middlewares add to it — the request metrics under the route's pattern, and with
 * LOG_LEVEL=debug the line of a refused request.
 */
import type { ServerResponse } from 'node:http';
import type { Logger } from '../logger.js';
import type { MetricsRecorder } from '../metrics/recorder.js';
import { apiSecurityHeaders } from './security-headers.js';

const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';

export interface FastAnswer {
  status: number;
  headers: Record<string, string>;
  body: string | null;
}

/** What a fast path needs to answer as the app does. */
export interface FastAnswerDeps {
  /** Every API answer's headers but its request id (fastApiHeaders). */
  apiHeaders: Readonly<Record<string, string>>;
  recorder: MetricsRecorder;
  logger: Logger;
}

/**
 * The headers the app gives every API answer after its request id: the security headers, and
 * with TRUSTED_ORIGINS the `Vary: Origin` its CORS edge adds to every API answer (http/cross-site.ts).
 */
export function fastApiHeaders(settings: { httpsBaseUrl: boolean; trustedOrigins: readonly string[] }): Readonly<Record<string, string>> {
  const headers: Record<string, string> = { ...apiSecurityHeaders(settings) };
  if (settings.trustedOrigins.length > 0) headers.Vary = 'Origin';
  return Object.freeze(headers);
}

/** Host headers already judged (a few in practice; forgotten all at once past this many). */
const hostVerdicts = new Map<string, boolean>();
const MAX_HOST_VERDICTS = 64;

/**
 * Whether the Node adapter makes a URL of this Host header. It refuses one that is not a host (it
 * throws, and the server shell answers 400 `malformed_request`): a fast path must leave such a
 * request to it. The rule is the adapter's own (@hono/node-server's newRequest).
 */
export function isWellFormedHost(host: string | undefined): boolean {
  if (host === undefined) return false;
  let verdict = hostVerdicts.get(host);
  if (verdict === undefined) {
    verdict = judgeHost(host);
    if (hostVerdicts.size >= MAX_HOST_VERDICTS) hostVerdicts.clear();
    hostVerdicts.set(host, verdict);
  }
  return verdict;
}

function judgeHost(host: string): boolean {
  try {
    const { hostname } = new URL(`http://${host}/`);
    return hostname.length === host.length || hostname === host.replace(/:\d+$/, '');
  } catch {
    return false;
  }
}

/** As the app's jsonAnswer and its Node adapter write them: the type, then the length. */
export function jsonAnswerHeaders(base: Record<string, string>, body: string): Record<string, string> {
  return { ...base, 'Content-Type': JSON_CONTENT_TYPE, 'Content-Length': String(Buffer.byteLength(body)) };
}

/**
 * Writes `answer` (with Connection: close while the server shuts down), then counts it as the
 * app's metrics middleware would, under `route` (the route's pattern, never a raw path).
 */
export function writeFastAnswer(
  deps: FastAnswerDeps,
  outgoing: ServerResponse,
  request: { route: string; method: string; requestId: string; startedAt: number; closing: boolean },
  answer: FastAnswer,
): void {
  if (request.closing) answer.headers.connection = 'close';
  outgoing.writeHead(answer.status, answer.headers);
  outgoing.end(answer.body ?? undefined);
  const { route, method, requestId } = request;
  deps.recorder.observeRequest(route, method, answer.status, (performance.now() - request.startedAt) / 1000);
  if (answer.status >= 400 && answer.status < 500) deps.logger.debug({ requestId, method, path: route, status: answer.status }, 'request refused');
}
