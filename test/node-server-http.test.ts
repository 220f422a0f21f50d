/**
 * The Node server shell over real HTTP against the built server, where it differs from the
 * library face: it reads request bodies from Node's request stream instead of through a WHATWG
 * Request (src/node-body.ts), and the Node adapter writes answers built from plain header records
 * (src/http/answer.ts) without converting them. The same answers as the library face for every
 * way a body can arrive — with a Content-Length or chunked, too long, cut off, with a byte-order
 * mark — and the same headers on the wire, repeated Set-Cookie included.
 */
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startServerProcess, type ServerProcess } from './support/server-process.js';

const PASSWORD = 'Correct-Horse-9';
const LIMIT = 16 * 1024;

interface RawAnswer {
  status: number;
  body: Record<string, unknown>;
}

/**
 * Sends `chunks` one write at a time, 20 ms apart so that each reaches the server as its own
 * read; without a content-length header Node sends them chunked.
 */
function send(url: string, pathname: string, chunks: (string | Buffer)[], headers: Record<string, string | number> = {}): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const request = http.request(new URL(pathname, url), { method: 'POST', headers: { 'content-type': 'application/json', ...headers } }, (response) => {
      let text = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (text += chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body: JSON.parse(text) as Record<string, unknown> }));
    });
    // The server may answer 413 and close before an over-long body is fully written.
    request.on('error', (error: NodeJS.ErrnoException) => (error.code === 'EPIPE' || error.code === 'ECONNRESET' ? undefined : reject(error)));
    const writeFrom = (index: number): void => {
      if (index === chunks.length) {
        request.end();
        return;
      }
      request.write(chunks[index]!);
      setTimeout(() => writeFrom(index + 1), chunks.length > 1 ? 20 : 0);
    };
    writeFrom(0);
  });
}

/** Writes `raw` bytes on a new connection and reads until the server closes it. */
function sendRaw(url: string, raw: string | Buffer): Promise<{ status: number; headers: Map<string, string>; body: string }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), hostname, () => socket.write(raw));
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', (error: NodeJS.ErrnoException) => (error.code === 'ECONNRESET' || error.code === 'EPIPE' ? undefined : reject(error)));
    socket.on('close', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const [head = '', body = ''] = text.split('\r\n\r\n');
      const [statusLine = '', ...lines] = head.split('\r\n');
      const headers = new Map(lines.map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]));
      resolve({ status: Number(statusLine.split(' ')[1]), headers, body });
    });
  });
}

async function loginStatus(url: string, email: string): Promise<number> {
  const response = await fetch(`${url}/api/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email, password: PASSWORD }),
  });
  return response.status;
}

describe('the Node server over HTTP', () => {
  let server: ServerProcess;
  let dir: string;

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-bodies-'));
    server = await startServerProcess({
      cwd: dir,
      env: {
        DATABASE_URL: `sqlite:${path.join(dir, 'db.sqlite')}`,
        JWT_SECRET: 'bodies-test-secret-0123456789-0123456789',
        RATE_LIMIT_REGISTER: '1000/1m',
        RATE_LIMIT_LOGIN: '1000/1m',
      },
    });
  });

  afterAll(async () => {
    await server?.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  test('a JSON body with a Content-Length registers, and the account signs in', async () => {
    const body = JSON.stringify({ email: 'length@example.com', password: PASSWORD });
    const answer = await send(server.url, '/api/auth/register', [body], { 'content-length': Buffer.byteLength(body) });
    expect(answer.status).toBe(201);
    expect(await loginStatus(server.url, 'length@example.com')).toBe(200);
  });

  test('a chunked body (no Content-Length) split across writes registers', async () => {
    const body = JSON.stringify({ email: 'chunked@example.com', password: PASSWORD });
    const answer = await send(server.url, '/api/auth/register', [body.slice(0, 7), body.slice(7, 20), body.slice(20)]);
    expect(answer.status).toBe(201);
    expect(await loginStatus(server.url, 'chunked@example.com')).toBe(200);
  });

  test('a multi-byte character split between two chunks arrives whole', async () => {
    // "é" is two bytes in UTF-8; the write boundary falls between them.
    const bytes = Buffer.from(JSON.stringify({ email: 'split@example.com', password: `${PASSWORD}é` }));
    const cut = bytes.indexOf(0xc3) + 1;
    const answer = await send(server.url, '/api/auth/register', [bytes.subarray(0, cut), bytes.subarray(cut)], { 'content-length': bytes.length });
    expect(answer.status).toBe(201);
    const login = await fetch(`${server.url}/api/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'split@example.com', password: `${PASSWORD}é` }),
    });
    expect(login.status).toBe(200);
  });

  test('a declared Content-Length over 16 KiB answers 413 without reading, and writes nothing', async () => {
    const body = JSON.stringify({ email: 'declared-big@example.com', password: PASSWORD, padding: 'x'.repeat(LIMIT) });
    const answer = await send(server.url, '/api/auth/register', [body], { 'content-length': Buffer.byteLength(body) });
    expect(answer).toEqual({ status: 413, body: { error: 'payload_too_large', message: expect.any(String) } });
    expect(await loginStatus(server.url, 'declared-big@example.com')).toBe(401);
  });

  test('a chunked body that grows past 16 KiB answers 413 and writes nothing', async () => {
    const body = JSON.stringify({ email: 'chunked-big@example.com', password: PASSWORD, padding: 'x'.repeat(LIMIT) });
    const pieces = Array.from({ length: Math.ceil(body.length / 4096) }, (_, i) => body.slice(i * 4096, (i + 1) * 4096));
    const answer = await send(server.url, '/api/auth/register', pieces);
    expect(answer.status).toBe(413);
    expect(answer.body.error).toBe('payload_too_large');
    expect(await loginStatus(server.url, 'chunked-big@example.com')).toBe(401);
  });

  test('a body of exactly 16 KiB is read', async () => {
    const base = JSON.stringify({ email: 'exact@example.com', password: PASSWORD, padding: '' });
    const body = base.replace('"padding":""', `"padding":"${'x'.repeat(LIMIT - base.length)}"`);
    expect(Buffer.byteLength(body)).toBe(LIMIT);
    const answer = await send(server.url, '/api/auth/register', [body]);
    expect(answer.status).toBe(201);
  });

  test('malformed JSON, a wrong content type and an empty body get the same answers as the library face', async () => {
    expect((await send(server.url, '/api/auth/login', ['{"email":'])).body).toMatchObject({ error: 'validation_error' });
    expect((await send(server.url, '/api/auth/login', [''])).status).toBe(400);
    const text = await send(server.url, '/api/auth/login', ['{}'], { 'content-type': 'text/plain' });
    expect(text).toMatchObject({ status: 415, body: { error: 'unsupported_media_type' } });
  });

  test('a leading byte-order mark is dropped, as Request.text() drops it', async () => {
    const answer = await send(server.url, '/api/auth/register', [`\uFEFF${JSON.stringify({ email: 'bom@example.com', password: PASSWORD })}`]);
    expect(answer.status).toBe(201);
  });

  test('answers on the wire carry the full header set; a login sets both cookies as separate headers', async () => {
    const body = JSON.stringify({ email: 'wire@example.com', password: PASSWORD });
    await send(server.url, '/api/auth/register', [body]);
    const raw = await new Promise<http.IncomingMessage>((resolve, reject) => {
      const request = http.request(new URL('/api/auth/login', server.url), { method: 'POST', headers: { 'content-type': 'application/json' } }, resolve);
      request.on('error', reject);
      request.end(body);
    });
    raw.resume();
    expect(raw.statusCode).toBe(200);
    expect(raw.headers['set-cookie']?.map((cookie) => cookie.split('=')[0])).toEqual(['gatehouse_session', 'gatehouse_device']);
    const cookie = raw.headers['set-cookie']![0]!.split(';')[0]!;
    for (const response of [
      await fetch(`${server.url}/api/auth/session`, { headers: { cookie } }),
      await fetch(`${server.url}/api/auth/session`),
      await fetch(`${server.url}/api/auth/nothing-here`),
    ]) {
      expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
      expect(response.headers.get('content-security-policy')).toBe("default-src 'none'; frame-ancestors 'none'");
      expect(response.headers.get('cache-control')).toBe('no-store');
      expect(response.headers.get('x-frame-options')).toBe('DENY');
      expect(response.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
      expect(Number(response.headers.get('content-length'))).toBe((await response.arrayBuffer()).byteLength);
    }
    const page = await fetch(`${server.url}/login`);
    expect(page.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    expect(page.headers.get('content-security-policy')).not.toBe("default-src 'none'; frame-ancestors 'none'");
  });

  test("requests Node's HTTP parser cannot read get the JSON error shape with the security headers, and the connection closes", async () => {
    const unreadable: [string, string | Buffer, number][] = [
      ['a control byte in a header', 'GET /healthz HTTP/1.1\r\nHost: x\r\nX-Odd: a\u0001b\r\n\r\n', 400],
      ['two Content-Length values', 'POST /api/auth/login HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}', 400],
      ['a broken chunk size', 'POST /api/auth/login HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n', 400],
      ['headers past 16 KiB', `GET /healthz HTTP/1.1\r\nHost: x\r\nX-Long: ${'a'.repeat(20_000)}\r\n\r\n`, 431],
    ];
    for (const [what, raw, status] of unreadable) {
      const answer = await sendRaw(server.url, raw);
      expect([what, answer.status]).toEqual([what, status]);
      expect(answer.headers.get('content-type')).toBe('application/json; charset=utf-8');
      expect(answer.headers.get('x-content-type-options')).toBe('nosniff');
      expect(answer.headers.get('connection')).toBe('close');
      expect(JSON.parse(answer.body)).toEqual({ error: 'malformed_request', message: expect.any(String) });
    }
    // A readable request on its own connection is still served.
    expect((await sendRaw(server.url, 'GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n')).status).toBe(200);
    expect(server.output()).not.toMatch(/"level":50|unhandled error/);
  });

  test('requests the Node adapter cannot turn into a URL (a bad Host, a backslash in the path, OPTIONS *, no Host) get the JSON error shape with the security headers', async () => {
    const refused: [string, string][] = [
      ['a Host with a space', 'GET /healthz HTTP/1.1\r\nHost: exa mple.com\r\n\r\n'],
      ['a Host with a path', 'GET /healthz HTTP/1.1\r\nHost: x/y\r\n\r\n'],
      ['an unclosed IPv6 Host', 'GET /healthz HTTP/1.1\r\nHost: [::1\r\n\r\n'],
      ['a backslash in the path', 'GET /api\\auth/session HTTP/1.1\r\nHost: x\r\n\r\n'],
      ['OPTIONS *', 'OPTIONS * HTTP/1.1\r\nHost: x\r\n\r\n'],
      ['no Host in HTTP/1.1', 'GET /healthz HTTP/1.1\r\n\r\n'],
      ['a bad Host on a POST with a body', 'POST /api/auth/login HTTP/1.1\r\nHost: a b\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}'],
    ];
    for (const [what, raw] of refused) {
      const answer = await sendRaw(server.url, raw);
      expect([what, answer.status]).toEqual([what, 400]);
      expect(answer.headers.get('content-type'), what).toBe('application/json; charset=utf-8');
      expect(answer.headers.get('x-content-type-options'), what).toBe('nosniff');
      expect(answer.headers.get('content-security-policy'), what).toBe("default-src 'none'; frame-ancestors 'none'");
      expect(answer.headers.get('cache-control'), what).toBe('no-store');
      expect(JSON.parse(answer.body), what).toEqual({ error: 'malformed_request', message: expect.any(String) });
    }
    // A backslash in the query, and HTTP/1.0 without Host, are still served.
    expect((await sendRaw(server.url, 'GET /healthz?a\\b HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n')).status).toBe(200);
    expect((await sendRaw(server.url, 'GET /healthz HTTP/1.0\r\n\r\n')).status).toBe(200);
    expect(server.output()).not.toMatch(/"level":50|unhandled error/);
  });

  test('a body that is not UTF-8 or gives a key twice is 400 validation_error through the Node shell too', async () => {
    const bytes = Buffer.from(JSON.stringify({ email: 'node-bytes@example.com', password: `${PASSWORD}X` }));
    bytes[bytes.lastIndexOf(0x58)] = 0xff;
    const notUtf8 = await send(server.url, '/api/auth/register', [bytes], { 'content-length': bytes.length });
    expect(notUtf8).toEqual({
      status: 400,
      body: { error: 'validation_error', message: 'The request body is not valid UTF-8.', issues: [{ path: '', message: 'is not valid UTF-8' }] },
    });
    // Split inside a two-byte character it is still UTF-8 (the chunks are joined first).
    const split = Buffer.from(JSON.stringify({ email: 'node-split@example.com', password: `${PASSWORD}é` }));
    const cut = split.indexOf(0xc3) + 1;
    expect((await send(server.url, '/api/auth/register', [split.subarray(0, cut), split.subarray(cut)])).status).toBe(201);
    const twice = await send(server.url, '/api/auth/register', [`{"email":"node-twice@example.com","password":"${PASSWORD}","password":"other"}`]);
    expect(twice).toEqual({
      status: 400,
      body: { error: 'validation_error', message: expect.any(String), issues: [{ path: 'password', message: 'is given more than once' }] },
    });
    expect(await loginStatus(server.url, 'node-bytes@example.com')).toBe(401);
    expect(await loginStatus(server.url, 'node-twice@example.com')).toBe(401);
  });

  test('a client that disconnects mid-body costs no 500 and no crash; the next request is served', async () => {
    await new Promise<void>((resolve) => {
      const request = http.request(new URL('/api/auth/register', server.url), {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'content-length': 1000 },
      });
      request.on('error', () => resolve());
      request.write('{"email":"gone@example.com",');
      setTimeout(() => request.destroy(), 50);
    });
    const health = await fetch(`${server.url}/healthz`);
    expect(health.status).toBe(200);
    expect(server.output()).not.toMatch(/"level":50|unhandled error/);
    expect(await loginStatus(server.url, 'gone@example.com')).toBe(401);
  });
});
