/**
 * @module Outbound requests to a provider: an injected fetch, a time bound, a cap on the answer's
 * size, and every failure classified as a ProviderRequestError. `requestJSON` serves GitHub;
 * `createBoundedFetch` gives openid-client the same bounds (its `customFetch`). Nothing here logs,
 * and errors never quote a request body (it holds the client secret and the code).
 */
import { ProviderRequestError } from './provider.js';

/**
 * The most a provider's answer may hold. A token answer or a profile is a few KB; a list of
 * emails a few more. A provider (or whatever answers at its address) that sends more is cut off
 * instead of filling the server's memory.
 */
export const MAX_PROVIDER_RESPONSE_BYTES = 1024 * 1024;

export type FetchFunction = (input: string | URL, init?: RequestInit) => Promise<Response>;

export interface ProviderHTTPOptions {
  fetch: FetchFunction;
  /** Each request, headers and body, must finish within this bound. */
  timeoutMs: number;
}

export interface JSONResponse {
  status: number;
  body: unknown;
}

/**
 * Sends the request and parses the JSON body whatever the status: GitHub reports token
 * errors as HTTP 200 with an `error` field, other providers as 400 (github-oauth.md §3, §10),
 * so the caller decides. A body that is not JSON is an unexpected response.
 */
export async function requestJSON(options: ProviderHTTPOptions, url: string, init: RequestInit): Promise<JSONResponse> {
  const { status, body } = await boundedRequest(options, url, { ...init, redirect: 'error' });
  try {
    return { status, body: JSON.parse(new TextDecoder().decode(body)) as unknown };
  } catch {
    throw new ProviderRequestError({ kind: 'unexpected_response', status }, `${new URL(url).host} answered HTTP ${status} without JSON`);
  }
}

/** Statuses whose Response may not carry a body (Fetch standard, "null body status"). */
const NULL_BODY_STATUSES = new Set([101, 103, 204, 205, 304]);

/**
 * A fetch for openid-client (its `customFetch`) with the bounds of `requestJSON`: the library's
 * own abort signal still applies, and so does our time bound; the answer is read whole, at most
 * MAX_PROVIDER_RESPONSE_BYTES, and handed over as a new Response. A failure is a
 * ProviderRequestError, which the library passes on as the `cause` of its own error.
 */
export function createBoundedFetch(options: ProviderHTTPOptions): (url: string, init: RequestInit) => Promise<Response> {
  return async (url, init) => {
    const { status, statusText, headers, body } = await boundedRequest(options, url, init);
    return new Response(NULL_BODY_STATUSES.has(status) ? null : body, { status, statusText, headers });
  };
}

interface BoundedAnswer {
  status: number;
  statusText: string;
  headers: Headers;
  body: Uint8Array<ArrayBuffer>;
}

async function boundedRequest(options: ProviderHTTPOptions, url: string, init: RequestInit): Promise<BoundedAnswer> {
  const timeout = AbortSignal.timeout(options.timeoutMs);
  const signal = init.signal ? AbortSignal.any([init.signal, timeout]) : timeout;
  try {
    const response = await options.fetch(url, { ...init, signal });
    const body = await readBoundedBody(response, MAX_PROVIDER_RESPONSE_BYTES);
    if (body === null) {
      throw new ProviderRequestError(
        { kind: 'too_large', maxBytes: MAX_PROVIDER_RESPONSE_BYTES },
        `${new URL(url).host} answered more than ${MAX_PROVIDER_RESPONSE_BYTES} bytes`,
      );
    }
    return { status: response.status, statusText: response.statusText, headers: response.headers, body };
  } catch (error) {
    if (error instanceof ProviderRequestError) throw error;
    const timedOut = signal.aborted;
    throw new ProviderRequestError(
      { kind: 'network', timedOut },
      timedOut ? `No answer from ${new URL(url).host} within ${options.timeoutMs} ms` : `Could not reach ${new URL(url).host}`,
      { cause: error },
    );
  }
}

/** The body, read chunk by chunk; null (and the rest not read) once it passes `maxBytes`. */
async function readBoundedBody(response: Response, maxBytes: number): Promise<Uint8Array<ArrayBuffer> | null> {
  const declared = Number(response.headers.get('content-length'));
  if (Number.isFinite(declared) && declared > maxBytes) {
    await response.body?.cancel();
    return null;
  }
  if (response.body === null) return new Uint8Array(0);
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > maxBytes) {
      await reader.cancel();
      return null;
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks, size);
}
