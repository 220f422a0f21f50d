/**
 * What the fast-path tests share (test/session-fast-path.test.ts, test/login-fast-path.test.ts): a
 * request sent over real HTTP to `gatehouse serve` (where a fast path may answer it) and the same
 * request given to the library face's `fetch` (which never takes one), each read back as status,
 * flat headers and body text, and the two made comparable.
 */
import http from 'node:http';
import type { RunningServer } from '../../src/server.js';

export interface Raw {
  status: number;
  headers: Record<string, string>;
  body: string;
}

export interface Sent {
  path: string;
  method?: string;
  headers?: Record<string, string>;
  body?: string;
}

/** What differs by nature between two answers: the request id, and Node's own connection headers. */
const PER_ANSWER = new Set(['x-request-id', 'date', 'connection', 'keep-alive', 'transfer-encoding']);

export function comparable(answer: Raw): Raw {
  return { ...answer, headers: Object.fromEntries(Object.entries(answer.headers).filter(([name]) => !PER_ANSWER.has(name))) };
}

/** The answer of `gatehouse serve` at `url`, as a client reads it (repeated headers joined). */
export function overHttp(url: string, sent: Sent): Promise<Raw> {
  return new Promise((resolve, reject) => {
    const request = http.request(`${url}${sent.path}`, { method: sent.method ?? 'GET', headers: sent.headers ?? {} }, (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (body += chunk));
      response.on('end', () => {
        const flat: Record<string, string> = {};
        for (const [name, value] of Object.entries(response.headers)) flat[name] = Array.isArray(value) ? value.join(', ') : String(value);
        resolve({ status: response.statusCode ?? 0, headers: flat, body });
      });
    });
    request.on('error', reject);
    request.end(sent.body);
  });
}

/** The library face's answer to the same request, from the loopback address, with the length the Node adapter would add. */
export async function viaLibrary(fetch: RunningServer['gatehouse']['fetch'], url: string, sent: Sent): Promise<Raw> {
  const response = await fetch(new Request(`${url}${sent.path}`, { method: sent.method ?? 'GET', headers: sent.headers, body: sent.body }), {
    remoteAddress: '127.0.0.1',
  });
  const body = await response.text();
  const flat: Record<string, string> = {};
  response.headers.forEach((value, name) => (flat[name] = value));
  if (!('content-length' in flat) && body !== '') flat['content-length'] = String(Buffer.byteLength(body));
  return { status: response.status, headers: flat, body };
}
