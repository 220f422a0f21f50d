/**
 * @module Outbound JSON requests to a provider: an injected fetch, a time bound, and every
 * failure classified as a ProviderRequestError. Nothing here logs, and errors never quote a
 * request body (it holds the client secret and the code).
 */
import { ProviderRequestError } from './provider.js';

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
    text = await response.text();
  } catch (error) {
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
