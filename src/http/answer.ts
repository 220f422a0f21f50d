/**
 * @module The headers of an answer, kept as a plain record on the request's context, and JSON
 * answers built straight from it.
 *
 * Why not Hono's `c.header()`: it keeps headers in a WHATWG Headers object, which validates every
 * name and value as it is set, and which the Node adapter must then iterate (sorted) back into a
 * plain object before writing. Measured on this project's machine, a bare Hono app answering
 * with the ten headers every API answer carries did 17,500 answers/s set through `c.header()`,
 * 27,000/s given as a plain record (docs/performance.md). Here each request collects its
 * headers — X-Request-Id, the API's security headers, cookies, Retry-After — in a plain record,
 * and `jsonAnswer` hands that record to the Response as it is, which the Node adapter writes
 * without conversion.
 *
 * Every other response (pages, redirects, static assets) is built by Hono as usual and gets the
 * same record merged after its handler (`mergeAnswerHeaders`), so no answer ever lacks a header.
 *
 * @example
 * addAnswerCookie(c, 'gatehouse_session', token, { httpOnly: true, sameSite: 'Lax', path: '/' });
 * setAnswerHeader(c, 'Retry-After', '60');
 * return jsonAnswer(c, { ok: true }, 201);
 */
import type { Context } from 'hono';
import { generateCookie } from 'hono/cookie';
import type { CookieOptions } from 'hono/utils/cookie';
import type { AnswerHeaders, AppEnv } from './env.js';

const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';

/** Responses built by jsonAnswer: they already carry the record, so nothing is merged into them. */
const builtFromRecord = new WeakSet<Response>();

export function startAnswer(c: Context<AppEnv>, headers: Record<string, string>): void {
  c.set('answer', { headers, cookies: [] });
}

/** This request's record; an empty one if the first middleware never ran (an error before it). */
function answerOf(c: Context<AppEnv>): AnswerHeaders {
  let answer = c.get('answer');
  if (answer === undefined) {
    answer = { headers: {}, cookies: [] };
    c.set('answer', answer);
  }
  return answer;
}

export function setAnswerHeader(c: Context<AppEnv>, name: string, value: string): void {
  answerOf(c).headers[name] = value;
}

/** Copies `headers` (computed once, e.g. the security headers) into this answer's record. */
export function addAnswerHeaders(c: Context<AppEnv>, headers: Readonly<Record<string, string>>): void {
  Object.assign(answerOf(c).headers, headers);
}

export function addAnswerCookie(c: Context<AppEnv>, name: string, value: string, options: CookieOptions): void {
  answerOf(c).cookies.push(generateCookie(name, value, options));
}

/** Expires the cookie in the browser (an empty value with Max-Age=0). */
export function clearAnswerCookie(c: Context<AppEnv>, name: string, options: CookieOptions): void {
  addAnswerCookie(c, name, '', { ...options, maxAge: 0 });
}

export function jsonAnswer(c: Context<AppEnv>, body: unknown, status = 200): Response {
  const { headers, cookies } = answerOf(c);
  const init: ResponseInit =
    cookies.length === 0
      ? { status, headers: { ...headers, 'Content-Type': JSON_CONTENT_TYPE } }
      : // Set-Cookie may repeat, which a plain record cannot hold: a list of pairs instead.
        {
          status,
          headers: [...Object.entries(headers), ['Content-Type', JSON_CONTENT_TYPE], ...cookies.map((cookie) => ['Set-Cookie', cookie] as [string, string])],
        };
  const response = new Response(JSON.stringify(body), init);
  builtFromRecord.add(response);
  return response;
}

/**
 * For a response that Hono built (a page, a redirect, an asset): adds this answer's headers and
 * cookies. A header the response already has wins: a page's own Content-Security-Policy stays.
 */
export function mergeAnswerHeaders(c: Context<AppEnv>): void {
  if (builtFromRecord.has(c.res)) return;
  const answer = answerOf(c);
  // Into the response's own headers, not through c.header(): on a finished response that rebuilds
  // it around its body as a stream, and the WHATWG Response copies a byte body on the way — each
  // answer of a static file then held a copy of its own (web/static-asset.ts).
  const own = c.res.headers;
  for (const [name, value] of Object.entries(answer.headers)) if (!own.has(name)) own.set(name, value);
  for (const cookie of answer.cookies) own.append('Set-Cookie', cookie);
}
