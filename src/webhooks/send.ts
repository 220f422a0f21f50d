/**
 * @module One webhook attempt over HTTP (DESIGN §11.2, Delivery): POST the signed body, wait at
 * most `timeoutMs` for the whole exchange, follow no redirect, read at most 64 KiB of the answer
 * and keep none of it. 2xx is delivered; anything else is an attempt to retry later.
 *
 * The connection is made through `guardedLookup`, so the address rule applies to the address the
 * socket actually connects to; a host written as an IP literal skips DNS (and so the lookup) and
 * is checked up front instead. Each attempt has its own agent: a pooled keep-alive connection
 * could carry a later attempt to an address this one never checked. TLS verification stays on and
 * checks the certificate against the URL's host name, not the address it resolved to.
 *
 * The result's `error` is short and made here: it never carries the body, the headers (which hold
 * the signature) or the URL (whose path or query may hold a receiver's token).
 */
import type dns from 'node:dns';
import http, { type IncomingMessage } from 'node:http';
import https from 'node:https';
import net from 'node:net';
import { ADDRESS_REFUSED, guardedLookup, refusedAddress } from './address-guard.js';

export interface SendSettings {
  /** WEBHOOK_TIMEOUT, default 10 s: the whole attempt (connect, send, read). */
  timeoutMs: number;
  /** Production: an http:// URL is refused without a request. */
  requireHttps: boolean;
  /** Lifts the address rule only. */
  allowPrivateNetworks: boolean;
  /** The resolver behind the guarded lookup; tests inject one. */
  resolve?: typeof dns.lookup;
  /** Trusted roots in place of Node's, for https (tests; an operator's private CA belongs in NODE_EXTRA_CA_CERTS). */
  ca?: string;
}

export interface SendResult {
  statusCode: number | null;
  durationMs: number;
  error: string | null;
  delivered: boolean;
}

export const USER_AGENT = 'Gatehouse-Webhooks/1';
/** How much of an answer is read before the connection is dropped: enough for any acknowledgement. */
export const MAX_ANSWER_BYTES = 64 * 1024;
/** Headers the transport owns: a caller's value would misframe the body or redirect the name checked by TLS. */
const TRANSPORT_HEADERS = new Set(['host', 'content-length', 'transfer-encoding', 'connection']);
const MAX_ERROR_LENGTH = 200;

/** A URL host without the brackets of an IPv6 literal. */
function bareHost(url: URL): string {
  return url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
}

/**
 * For registration (POST /api/admin/webhooks) and again before each attempt (a setting may have
 * changed since): the URL's problem, or null. Names are resolved only at send time — DNS can
 * change — so only an IP-literal host is judged by the address rule here.
 */
export function urlProblem(url: string, settings: Pick<SendSettings, 'requireHttps' | 'allowPrivateNetworks'>): string | null {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return 'not a URL';
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return 'the URL must be http or https';
  if (settings.requireHttps && parsed.protocol !== 'https:') return 'https is required';
  if (parsed.username !== '' || parsed.password !== '') return 'credentials in the URL are refused';
  // `new URL` drops an empty fragment ("…/hook#"), so the raw text is what tells.
  if (parsed.hash !== '' || url.includes('#')) return 'a fragment in the URL is refused';
  const host = bareHost(parsed);
  if (net.isIP(host) !== 0) return refusedAddress(host, settings);
  return null;
}

function requestHeaders(given: Record<string, string>, body: string): Record<string, string> {
  const headers: Record<string, string> = { 'content-type': 'application/json', 'user-agent': USER_AGENT };
  for (const [name, value] of Object.entries(given)) {
    const key = name.toLowerCase();
    if (!TRANSPORT_HEADERS.has(key)) headers[key] = value;
  }
  headers['content-length'] = String(Buffer.byteLength(body));
  return headers;
}

const KNOWN_ERRORS: Readonly<Record<string, string>> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset',
  EPIPE: 'connection closed while sending',
  ENOTFOUND: 'host not found',
  EAI_AGAIN: 'host lookup failed (temporary)',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  ETIMEDOUT: 'connection timed out',
  ERR_INVALID_CHAR: 'a header holds a character HTTP does not allow',
  ERR_HTTP_INVALID_HEADER_VALUE: 'a header value is not valid',
  ERR_INVALID_HTTP_TOKEN: 'a header name is not valid',
  HPE_HEADER_OVERFLOW: 'the answer headers are too large',
};

/** A one-line error without a stack: a known code's own words, else the first line of Node's message (TLS errors are already short and say what failed). */
function shortError(error: unknown): string {
  const { code, message } = error instanceof Error ? (error as NodeJS.ErrnoException) : { code: undefined, message: String(error) };
  if (code === ADDRESS_REFUSED) return message;
  const known = code === undefined ? undefined : KNOWN_ERRORS[code];
  if (known !== undefined) return known;
  if (code?.startsWith('HPE_') === true) return 'the answer is not valid HTTP';
  const line = (message.split('\n')[0] ?? '').slice(0, MAX_ERROR_LENGTH);
  return code === undefined || line.includes(code) ? line : `${line} (${code})`;
}

/** The error as it may be stored: should it somehow quote the body or a header value, it is replaced whole. */
function withoutSecrets(error: string, headers: Record<string, string>, body: string): string {
  const secrets = [body, ...Object.values(headers)].filter((value) => value.length >= 8);
  return secrets.some((secret) => error.includes(secret)) ? 'the request failed' : error;
}

type Outcome = Omit<SendResult, 'durationMs'>;

function requestOptions(target: URL, headers: Record<string, string>, settings: SendSettings): https.RequestOptions {
  const host = bareHost(target);
  return {
    method: 'POST',
    headers,
    agent: false,
    lookup: guardedLookup(settings, settings.resolve),
    // The certificate is checked against the URL's name (not an IP literal, which SNI forbids).
    servername: net.isIP(host) === 0 ? host : undefined,
    ca: settings.ca,
    rejectUnauthorized: true,
  };
}

/** Reads the answer up to MAX_ANSWER_BYTES, then settles; a redirect settles at once. */
function readAnswer(response: IncomingMessage, settle: (outcome: Outcome) => void): void {
  const statusCode = response.statusCode ?? null;
  const code = statusCode ?? 0;
  if (code >= 300 && code < 400) return settle({ statusCode, error: `redirect not followed (${code})`, delivered: false });
  const answered: Outcome = { statusCode, error: null, delivered: code >= 200 && code < 300 };
  let read = 0;
  response.on('data', (chunk: Buffer) => {
    read += chunk.length;
    if (read >= MAX_ANSWER_BYTES) settle(answered);
  });
  response.on('end', () => settle(answered));
  response.on('error', () => settle({ statusCode, error: 'the answer was cut off', delivered: false }));
  response.on('close', () => {
    if (!response.complete) settle({ statusCode, error: 'the answer was cut off', delivered: false });
  });
}

function attempt(target: URL, headers: Record<string, string>, body: string, settings: SendSettings): Promise<Outcome> {
  return new Promise((resolve) => {
    let settled = false;
    let statusCode: number | null = null;
    const transport = target.protocol === 'https:' ? https : http;
    const request = transport.request(target, requestOptions(target, headers, settings), (response) => {
      statusCode = response.statusCode ?? null;
      readAnswer(response, settle);
    });
    const timer = setTimeout(() => {
      settle({ statusCode, error: `timed out after ${settings.timeoutMs} ms`, delivered: false });
    }, settings.timeoutMs);
    function settle(outcome: Outcome): void {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      // Whatever is left of the answer is not wanted: closing the socket stops the reading.
      request.destroy();
      resolve(outcome);
    }
    request.on('error', (error) => settle({ statusCode, error: shortError(error), delivered: false }));
    request.end(body);
  });
}

/**
 * POSTs `body` with `headers` (plus content-type application/json and the user agent) to `url`.
 * delivered = a 2xx answer read to its end, or to its first 64 KiB, within the timeout. A 3xx is
 * not followed. Never throws: every failure is a result with a short `error`.
 */
export async function sendWebhook(url: string, headers: Record<string, string>, body: string, settings: SendSettings): Promise<SendResult> {
  const started = performance.now();
  const finish = (outcome: Outcome): SendResult => ({
    ...outcome,
    error: outcome.error === null ? null : withoutSecrets(outcome.error, headers, body),
    durationMs: Math.round(performance.now() - started),
  });
  try {
    const problem = urlProblem(url, settings);
    if (problem !== null) return finish({ statusCode: null, error: problem, delivered: false });
    return finish(await attempt(new URL(url), requestHeaders(headers, body), body, settings));
  } catch (error) {
    return finish({ statusCode: null, error: shortError(error), delivered: false });
  }
}
