/**
 * @module Outbound JSON requests to a provider: an injected fetch, a time bound, and every
 * failure classified as a ProviderRequestError. Nothing here logs, and errors never quote a
 * request body (it holds the client secret and the code).
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
  const signal = AbortSignal.timeout(options.timeoutMs);
  let response: Response;
  let text: string;
  try {
    response = await options.fetch(url, { ...init, signal, redirect: 'error' });
    const bounded = await readBoundedText(response, MAX_PROVIDER_RESPONSE_BYTES);
    if (bounded === null) {
      throw new ProviderRequestError(
        { kind: 'too_large', maxBytes: MAX_PROVIDER_RESPONSE_BYTES },
        `${new URL(url).host} answered more than ${MAX_PROVIDER_RESPONSE_BYTES} bytes`,
      );
    }
    text = bounded;
  } catch (error) {
    if (error instanceof ProviderRequestError) throw error;
    const timedOut = signal.aborted;
    throw new ProviderRequestError(
      { kind: 'network', timedOut },
      timedOut ? `No answer from ${new URL(url).host} within ${options.timeoutMs} ms` : `Could not reach ${new URL(url).host}`,
      { cause: error },
    );
  }
  try {
    return { status: response.status, body: JSON.parse(text) as unknown };
  } catch {
    throw new ProviderRequestError(
      { kind: 'unexpected_response', status: response.status },
      `${new URL(url).host} answered HTTP ${response.status} without JSON`,
    );
  }
}

/** The body as text, read chunk by chunk; null (and the rest not read) once it passes `maxBytes`. */
async function readBoundedText(response: Response, maxBytes: number): Promise<string | null> {
  const declared = Number(response.headers.get('content-length'));
  if (Number.isFinite(declared) && declared > maxBytes) {
    await response.body?.cancel();
    return null;
  }
  if (response.body === null) return '';
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
  return new TextDecoder().decode(Buffer.concat(chunks, size));
}
