/**
 * One webhook attempt against real HTTP(S) servers on loopback: delivered on 2xx, no redirect
 * followed, a hang cut at the timeout, a huge answer cut at 64 KiB, and the address rule refusing
 * loopback, private and metadata addresses — before any request, whether the URL names an IP or a
 * name that resolves to one, and on the address the socket then connects to.
 *
 * Only loopback is ever connected to: private and public addresses appear only in the pure
 * `refusedAddress` cases and in `guardedLookup` called directly, which connects to nothing.
 */
import { execFileSync } from 'node:child_process';
import type dns from 'node:dns';
import type { LookupAddress } from 'node:dns';
import fs from 'node:fs';
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { TLSSocket } from 'node:tls';
import { afterEach, describe, expect, test } from 'vitest';
import { guardedLookup, refusedAddress } from '../src/webhooks/address-guard.js';
import { sendWebhook, urlProblem, type SendSettings } from '../src/webhooks/send.js';
import { freePort } from './support/free-port.js';

interface Received {
  method: string | undefined;
  url: string | undefined;
  headers: http.IncomingHttpHeaders;
  body: string;
  servername: string | null;
}

interface TestServer {
  port: number;
  received: Received[];
  /** Sockets the server saw close, counted. */
  closedSockets: () => number;
  close: () => Promise<void>;
}

type Handler = (request: IncomingMessage, response: ServerResponse) => void;

const servers: TestServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

async function startServer(handler: Handler, options: { host?: string; tls?: { cert: string; key: string } } = {}): Promise<TestServer> {
  const received: Received[] = [];
  let closed = 0;
  const onRequest = (request: IncomingMessage, response: ServerResponse): void => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const socket = request.socket as Partial<TLSSocket>;
      const servername = typeof socket.servername === 'string' ? socket.servername : null;
      received.push({ method: request.method, url: request.url, headers: request.headers, body: Buffer.concat(chunks).toString(), servername });
      handler(request, response);
    });
  };
  const server = options.tls ? https.createServer(options.tls, onRequest) : http.createServer(onRequest);
  server.on(options.tls ? 'secureConnection' : 'connection', (socket: NodeJS.EventEmitter) => socket.on('close', () => (closed += 1)));
  // A refused TLS handshake is the test's point, not a server failure.
  server.on('tlsClientError', () => {});
  await new Promise<void>((resolve) => server.listen(0, options.host ?? '127.0.0.1', resolve));
  const testServer: TestServer = {
    port: (server.address() as AddressInfo).port,
    received,
    closedSockets: () => closed,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  servers.push(testServer);
  return testServer;
}

const answer =
  (status: number, headers: Record<string, string> = {}): Handler =>
  (_request, response) => {
    response.writeHead(status, headers).end('ok');
  };

/** Local servers are loopback, so the delivery tests lift the address rule; the refusal tests keep it. */
const OPEN: SendSettings = { timeoutMs: 5_000, requireHttps: false, allowPrivateNetworks: true };
const GUARDED: SendSettings = { timeoutMs: 5_000, requireHttps: false, allowPrivateNetworks: false };
const RULES_ON = { allowPrivateNetworks: false };
const BODY = JSON.stringify({ type: 'user.created', timestamp: '2026-01-01T00:00:00Z', data: { userId: 'u_1' } });
const HEADERS = { 'webhook-id': 'msg_1', 'webhook-timestamp': '1767225600', 'webhook-signature': 'v1,c2lnbmF0dXJlLXZhbHVlLWhlcmU=' };

/** A resolver that answers from a table and counts the questions, in dns.lookup's shape. */
function tableResolver(table: Record<string, string[]>): { resolve: typeof dns.lookup; calls: string[] } {
  const calls: string[] = [];
  const resolve = (hostname: string, _options: unknown, callback: (error: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void): void => {
    calls.push(hostname);
    const addresses = table[hostname];
    setImmediate(() => {
      if (addresses === undefined) {
        const error: NodeJS.ErrnoException = new Error(`getaddrinfo ENOTFOUND ${hostname}`);
        error.code = 'ENOTFOUND';
        callback(error, []);
        return;
      }
      callback(
        null,
        addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 })),
      );
    });
  };
  return { resolve: resolve as unknown as typeof dns.lookup, calls };
}

function hasIpv6Loopback(): boolean {
  return Object.values(os.networkInterfaces()).some((list) => list?.some((entry) => entry.address === '::1'));
}

function expectNoSecrets(error: string | null): void {
  expect(error).not.toContain('c2lnbmF0dXJl');
  expect(error).not.toContain('u_1');
  expect(error).not.toContain('msg_1');
}

describe('sendWebhook: the answer', () => {
  test('a 2xx answer is delivered; the request carries the body, the headers, the content type and the user agent', async () => {
    const server = await startServer(answer(204));
    const result = await sendWebhook(`http://127.0.0.1:${server.port}/hooks/in?x=1`, HEADERS, BODY, OPEN);
    expect(result).toMatchObject({ statusCode: 204, error: null, delivered: true });
    expect(result.durationMs).toBeGreaterThanOrEqual(0);
    expect(server.received).toHaveLength(1);
    const [request] = server.received;
    expect(request).toMatchObject({ method: 'POST', url: '/hooks/in?x=1', body: BODY });
    expect(request?.headers).toMatchObject({
      'content-type': 'application/json',
      'user-agent': 'Gatehouse-Webhooks/1',
      'content-length': String(Buffer.byteLength(BODY)),
      ...HEADERS,
    });
  });

  test('a 500 is not delivered and keeps its status code', async () => {
    const server = await startServer(answer(500));
    const result = await sendWebhook(`http://127.0.0.1:${server.port}/`, HEADERS, BODY, OPEN);
    expect(result).toMatchObject({ statusCode: 500, error: null, delivered: false });
    expect(server.received).toHaveLength(1);
  });

  test.each([301, 302, 303, 307, 308])('a %i is not followed: the redirect target receives nothing', async (status) => {
    const target = await startServer(answer(200));
    const redirecting = await startServer(answer(status, { location: `http://127.0.0.1:${target.port}/elsewhere` }));
    const result = await sendWebhook(`http://127.0.0.1:${redirecting.port}/`, HEADERS, BODY, OPEN);
    expect(result).toMatchObject({ statusCode: status, error: `redirect not followed (${status})`, delivered: false });
    expect(redirecting.received).toHaveLength(1);
    expect(target.received).toHaveLength(0);
  });

  test('a server that never answers is cut at the timeout, and its socket is closed', async () => {
    const server = await startServer(() => {
      // Never answers.
    });
    const result = await sendWebhook(`http://127.0.0.1:${server.port}/`, HEADERS, BODY, { ...OPEN, timeoutMs: 300 });
    expect(result).toMatchObject({ statusCode: null, error: 'timed out after 300 ms', delivered: false });
    expect(result.durationMs).toBeGreaterThanOrEqual(290);
    expect(result.durationMs).toBeLessThan(2_000);
    await expect.poll(() => server.closedSockets()).toBe(1);
  });

  test('the timeout covers reading the answer: headers then silence is not delivered', async () => {
    const server = await startServer((_request, response) => {
      response.writeHead(200, { 'content-length': '100' });
      response.write('partial');
    });
    const result = await sendWebhook(`http://127.0.0.1:${server.port}/`, HEADERS, BODY, { ...OPEN, timeoutMs: 300 });
    expect(result).toMatchObject({ statusCode: 200, error: 'timed out after 300 ms', delivered: false });
    expect(result.durationMs).toBeLessThan(2_000);
  });

  test('a 10 MB answer is read only to 64 KiB: the attempt ends promptly and the server sees the socket close before it could send it all', async () => {
    const total = 10 * 1024 * 1024;
    let finished = false;
    let closedEarly = false;
    const server = await startServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'text/plain', 'content-length': String(total) });
      const chunk = Buffer.alloc(64 * 1024, 'x');
      let sent = 0;
      response.on('close', () => (closedEarly = sent < total || !response.writableFinished));
      const pump = (): void => {
        while (sent < total && !response.destroyed) {
          sent += chunk.length;
          if (!response.write(chunk)) return void response.once('drain', pump);
        }
        if (sent >= total) response.end(() => (finished = true));
      };
      pump();
    });
    const result = await sendWebhook(`http://127.0.0.1:${server.port}/`, HEADERS, BODY, OPEN);
    expect(result).toMatchObject({ statusCode: 200, error: null, delivered: true });
    expect(result.durationMs).toBeLessThan(2_000);
    await expect.poll(() => server.closedSockets()).toBe(1);
    expect(closedEarly).toBe(true);
    expect(finished).toBe(false);
  });

  test('a server that closes mid-answer: the answer was cut off, not delivered', async () => {
    const server = await startServer((_request, response) => {
      response.writeHead(200, { 'content-length': '100' });
      response.write('partial', () => response.socket?.destroy());
    });
    const result = await sendWebhook(`http://127.0.0.1:${server.port}/`, HEADERS, BODY, OPEN);
    expect(result).toMatchObject({ statusCode: 200, error: 'the answer was cut off', delivered: false });
  });

  test('a closed port is a short error without a stack, the body or the headers', async () => {
    const port = await freePort();
    const result = await sendWebhook(`http://127.0.0.1:${port}/`, HEADERS, BODY, OPEN);
    expect(result).toMatchObject({ statusCode: null, error: 'connection refused', delivered: false });
  });

  test('a header value HTTP cannot carry is an error that does not quote it, never a throw', async () => {
    const server = await startServer(answer(200));
    const headers = { ...HEADERS, 'webhook-signature': 'v1,c2lnbmF0dXJl\r\nx-injected: yes' };
    const result = await sendWebhook(`http://127.0.0.1:${server.port}/`, headers, BODY, OPEN);
    expect(result.delivered).toBe(false);
    expect(result.error).toMatch(/header/);
    expectNoSecrets(result.error);
    expect(server.received).toHaveLength(0);
  });

  test('a URL that is not one is an error, never a throw', async () => {
    await expect(sendWebhook('not a url', HEADERS, BODY, OPEN)).resolves.toMatchObject({ statusCode: null, error: 'not a URL', delivered: false });
  });
});

describe('refusedAddress', () => {
  test.each([
    ['127.0.0.1', 'loopback'],
    ['127.8.9.10', 'loopback'],
    ['::1', 'loopback'],
    ['10.0.0.1', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.254', 'private'],
    ['192.168.1.1', 'private'],
    ['169.254.169.254', 'cloud metadata'],
    ['100.100.100.200', 'cloud metadata'],
    ['fd00:ec2::254', 'cloud metadata'],
    ['169.254.1.1', 'link-local'],
    ['fe80::1', 'link-local'],
    ['fe80::1%eth0', 'link-local'],
    ['fd00::1', 'unique-local'],
    ['fc00::1', 'unique-local'],
    ['::ffff:127.0.0.1', 'IPv4-mapped form of 127.0.0.1, a loopback'],
    ['::ffff:7f00:1', 'IPv4-mapped form of 127.0.0.1, a loopback'],
    ['::ffff:10.1.2.3', 'IPv4-mapped form of 10.1.2.3, a private'],
    ['::ffff:169.254.169.254', 'cloud metadata'],
    ['::ffff:0:7f00:1', 'IPv4-translated form of 127.0.0.1'],
    ['64:ff9b::a00:1', 'NAT64 form of 10.0.0.1, a private'],
    ['64:ff9b::7f00:1', 'NAT64 form of 127.0.0.1, a loopback'],
    ['64:ff9b:1::a00:1', 'local-use NAT64'],
    ['2002:c0a8:101::1', '6to4 form of 192.168.1.1, a private'],
    ['2002:7f00:1::', '6to4 form of 127.0.0.1'],
    ['::7f00:1', 'reserved'],
    ['0.0.0.0', 'unspecified'],
    ['0.1.2.3', 'unspecified'],
    ['::', 'unspecified'],
    ['100.64.0.1', 'carrier-grade NAT'],
    ['100.127.255.254', 'carrier-grade NAT'],
    ['224.0.0.1', 'multicast'],
    ['ff02::1', 'multicast'],
    ['255.255.255.255', 'broadcast'],
    ['240.0.0.1', 'reserved'],
    ['192.0.2.1', 'reserved'],
    ['2001:db8::1', 'reserved'],
    ['2001::1', 'Teredo'],
    ['fec0::1', 'site-local'],
    ['4000::1', 'reserved'],
    ['127.1', 'loopback'],
    ['[::1]', 'loopback'],
    ['not-an-address', 'not an IP address'],
  ])('%s is refused (%s)', (address, why) => {
    const refusal = refusedAddress(address, RULES_ON);
    expect(refusal).toContain(why);
    expect(refusedAddress(address, { allowPrivateNetworks: true })).toBeNull();
  });

  test.each([
    '93.184.216.34',
    '8.8.8.8',
    '100.128.0.1',
    '172.32.0.1',
    '2606:4700::1111',
    '2a00:1450:4001::1',
    '::ffff:8.8.8.8',
    '64:ff9b::808:808',
    '2002:808:808::1',
  ])('%s passes', (address) => {
    expect(refusedAddress(address, RULES_ON)).toBeNull();
  });

  test('the refusal names the address and its class', () => {
    expect(refusedAddress('10.0.0.1', RULES_ON)).toBe('10.0.0.1 is a private address');
  });
});

describe('sendWebhook: the address rule', () => {
  const loopbackLiterals = ['127.0.0.1', '[::ffff:127.0.0.1]', '0.0.0.0', '2130706433', '127.1'];
  test.each(loopbackLiterals)('http://%s:<port> is refused before any request', async (host) => {
    const server = await startServer(answer(200));
    const result = await sendWebhook(`http://${host}:${server.port}/`, HEADERS, BODY, GUARDED);
    expect(result.statusCode).toBeNull();
    expect(result.delivered).toBe(false);
    expect(result.error).toMatch(/loopback|unspecified/);
    expectNoSecrets(result.error);
    expect(server.received).toHaveLength(0);
    expect(server.closedSockets()).toBe(0);
  });

  test.runIf(hasIpv6Loopback())('http://[::1]:<port> is refused before any request', async () => {
    const server = await startServer(answer(200), { host: '::1' });
    const result = await sendWebhook(`http://[::1]:${server.port}/`, HEADERS, BODY, GUARDED);
    expect(result).toMatchObject({ statusCode: null, error: '::1 is a loopback address', delivered: false });
    expect(server.received).toHaveLength(0);
    // The control: with the rule lifted, the same URL reaches the server.
    expect(await sendWebhook(`http://[::1]:${server.port}/`, HEADERS, BODY, OPEN)).toMatchObject({ delivered: true });
    expect(server.received).toHaveLength(1);
  });

  test('a name resolving to 127.0.0.1 is refused: the server listening there gets no connection', async () => {
    const server = await startServer(answer(200));
    const names = tableResolver({ 'hooks.example.test': ['127.0.0.1'] });
    const result = await sendWebhook(`http://hooks.example.test:${server.port}/`, HEADERS, BODY, { ...GUARDED, resolve: names.resolve });
    expect(result).toMatchObject({ statusCode: null, delivered: false });
    expect(result.error).toBe('address refused for hooks.example.test: 127.0.0.1 is a loopback address');
    expect(names.calls).toEqual(['hooks.example.test']);
    expect(server.received).toHaveLength(0);
    expect(server.closedSockets()).toBe(0);
  });

  test('localhost through the system resolver is refused', async () => {
    const server = await startServer(answer(200));
    const result = await sendWebhook(`http://localhost:${server.port}/`, HEADERS, BODY, GUARDED);
    expect(result.error).toMatch(/^address refused for localhost: .* is a loopback address$/);
    expect(server.received).toHaveLength(0);
  });

  test('a name with one private address among public ones is refused whole, in either order (guardedLookup alone: nothing is connected to)', async () => {
    for (const addresses of [
      ['93.184.216.34', '10.0.0.1'],
      ['10.0.0.1', '93.184.216.34'],
      ['2606:4700::1111', 'fd00::1'],
    ]) {
      const names = tableResolver({ 'hooks.example.test': addresses });
      const lookup = guardedLookup(RULES_ON, names.resolve);
      for (const all of [true, false]) {
        const outcome = await new Promise<{ error: NodeJS.ErrnoException | null; address: unknown }>((resolve) => {
          lookup('hooks.example.test', { all }, (error, address) => resolve({ error, address }));
        });
        expect(outcome.error?.code).toBe('WEBHOOK_ADDRESS_REFUSED');
        expect(outcome.error?.message).toMatch(/private|unique-local/);
      }
    }
  });

  test('guardedLookup hands the checked addresses on, in the shape asked for', async () => {
    const names = tableResolver({ 'hooks.example.test': ['93.184.216.34', '2606:4700::1111'] });
    const lookup = guardedLookup(RULES_ON, names.resolve);
    const one = await new Promise<unknown[]>((resolve) => lookup('hooks.example.test', {}, (...args) => resolve(args)));
    expect(one).toEqual([null, '93.184.216.34', 4]);
    const all = await new Promise<unknown[]>((resolve) => lookup('hooks.example.test', { all: true }, (...args) => resolve(args)));
    expect(all).toEqual([
      null,
      [
        { address: '93.184.216.34', family: 4 },
        { address: '2606:4700::1111', family: 6 },
      ],
    ]);
    const missing = await new Promise<NodeJS.ErrnoException | null>((resolve) => lookup('nowhere.example.test', {}, (error) => resolve(error)));
    expect(missing?.code).toBe('ENOTFOUND');
  });

  test('the connection goes to the checked address: one resolution per attempt, and the Host header names the URL host', async () => {
    const server = await startServer(answer(200));
    const names = tableResolver({ 'hooks.example.test': ['127.0.0.1'] });
    const settings = { ...OPEN, resolve: names.resolve };
    for (let i = 1; i <= 2; i += 1) {
      expect(await sendWebhook(`http://hooks.example.test:${server.port}/in`, HEADERS, BODY, settings)).toMatchObject({ delivered: true, statusCode: 200 });
      expect(names.calls).toHaveLength(i);
    }
    expect(server.received).toHaveLength(2);
    expect(server.received[0]?.headers.host).toBe(`hooks.example.test:${server.port}`);
  });

  test.runIf(hasIpv6Loopback())('a name resolving to ::1 is connected to at ::1 under allowPrivateNetworks', async () => {
    const server = await startServer(answer(200), { host: '::1' });
    const names = tableResolver({ 'hooks.example.test': ['::1'] });
    expect(await sendWebhook(`http://hooks.example.test:${server.port}/`, HEADERS, BODY, { ...OPEN, resolve: names.resolve })).toMatchObject({
      delivered: true,
    });
    expect(names.calls).toHaveLength(1);
    expect(server.received).toHaveLength(1);
  });

  test('requireHttps refuses http:// without a request', async () => {
    const server = await startServer(answer(200));
    const result = await sendWebhook(`http://127.0.0.1:${server.port}/`, HEADERS, BODY, { ...OPEN, requireHttps: true });
    expect(result).toMatchObject({ statusCode: null, error: 'https is required', delivered: false });
    expect(server.received).toHaveLength(0);
    expect(server.closedSockets()).toBe(0);
  });
});

describe('urlProblem', () => {
  const dev = { requireHttps: false, allowPrivateNetworks: false };
  const production = { requireHttps: true, allowPrivateNetworks: false };
  test.each([
    ['not a url', dev, 'not a URL'],
    ['', dev, 'not a URL'],
    ['ftp://hooks.example.com/in', dev, 'the URL must be http or https'],
    ['javascript:alert(1)', dev, 'the URL must be http or https'],
    ['file:///etc/passwd', dev, 'the URL must be http or https'],
    ['http://hooks.example.com/in', production, 'https is required'],
    ['https://user:pass@hooks.example.com/in', production, 'credentials in the URL are refused'],
    ['https://token@hooks.example.com/in', production, 'credentials in the URL are refused'],
    ['https://hooks.example.com/in#frag', production, 'a fragment in the URL is refused'],
    ['https://hooks.example.com/in#', production, 'a fragment in the URL is refused'],
    ['https://127.0.0.1/in', production, '127.0.0.1 is a loopback address'],
    ['https://[::1]/in', production, '::1 is a loopback address'],
    ['https://10.0.0.1/in', production, '10.0.0.1 is a private address'],
    ['https://169.254.169.254/latest/meta-data', production, '169.254.169.254 is a cloud metadata address'],
    ['https://[fd00:ec2::254]/', production, 'fd00:ec2::254 is a cloud metadata address'],
    ['https://[::ffff:192.168.0.1]/', production, 'IPv4-mapped form of 192.168.0.1, a private address'],
    ['https://0x7f.1/', production, '127.0.0.1 is a loopback address'],
  ])('%s → %s', (url, settings, problem) => {
    expect(urlProblem(url, settings)).toContain(problem);
  });

  test.each([
    ['https://hooks.example.com/in?token=x', production],
    ['https://93.184.216.34:8443/in', production],
    ['https://[2606:4700::1111]/in', production],
    ['http://hooks.example.com/in', dev],
    // Names are judged at send time, when they are resolved.
    ['https://localhost/in', production],
    ['http://127.0.0.1:3000/in', { requireHttps: false, allowPrivateNetworks: true }],
  ])('%s passes', (url, settings) => {
    expect(urlProblem(url, settings)).toBeNull();
  });

  test('allowPrivateNetworks does not lift https', () => {
    expect(urlProblem('http://10.0.0.1/', { requireHttps: true, allowPrivateNetworks: true })).toBe('https is required');
  });
});

const hasOpenssl = fs.existsSync('/usr/bin/openssl');

/** A self-signed certificate for `name`, which is its own trust root when given as `ca`. */
function certificateFor(dir: string, name: string): { cert: string; key: string } {
  const cert = path.join(dir, `${name}.crt`);
  const key = path.join(dir, `${name}.key`);
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:P-256',
      '-nodes',
      '-keyout',
      key,
      '-out',
      cert,
      '-days',
      '1',
      '-subj',
      `/CN=${name}`,
      '-addext',
      `subjectAltName=DNS:${name}`,
    ],
    { stdio: 'ignore' },
  );
  return { cert: fs.readFileSync(cert, 'utf8'), key: fs.readFileSync(key, 'utf8') };
}

describe.runIf(hasOpenssl)('sendWebhook over https: TLS is verified against the URL host, not the resolved address', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'webhook-send-'));
  const good = certificateFor(dir, 'hooks.example.test');
  const other = certificateFor(dir, 'other.example.test');
  fs.rmSync(dir, { recursive: true, force: true });
  const resolverFor = (): ReturnType<typeof tableResolver> => tableResolver({ 'hooks.example.test': ['127.0.0.1'] });
  const tlsSettings = (resolve: typeof dns.lookup, ca?: string): SendSettings => ({
    timeoutMs: 5_000,
    requireHttps: true,
    allowPrivateNetworks: true,
    resolve,
    ...(ca === undefined ? {} : { ca }),
  });

  test('a certificate for the URL host, from a trusted root, is delivered; SNI carries the host name', async () => {
    const server = await startServer(answer(200), { tls: good });
    const resolver = resolverFor();
    const result = await sendWebhook(`https://hooks.example.test:${server.port}/in`, HEADERS, BODY, tlsSettings(resolver.resolve, good.cert));
    expect(result).toMatchObject({ statusCode: 200, error: null, delivered: true });
    expect(server.received[0]?.servername).toBe('hooks.example.test');
    expect(server.received[0]?.headers.host).toBe(`hooks.example.test:${server.port}`);
    expect(resolver.calls).toHaveLength(1);
  });

  test('a trusted certificate for another name is refused (the name checked is the URL host)', async () => {
    const server = await startServer(answer(200), { tls: other });
    const result = await sendWebhook(`https://hooks.example.test:${server.port}/in`, HEADERS, BODY, tlsSettings(resolverFor().resolve, other.cert));
    expect(result).toMatchObject({ statusCode: null, delivered: false });
    expect(result.error).toMatch(/hooks\.example\.test.*altnames|altnames.*hooks\.example\.test/i);
    expectNoSecrets(result.error);
    expect(server.received).toHaveLength(0);
  });

  test('a certificate from an untrusted root is refused: verification is on by default', async () => {
    const server = await startServer(answer(200), { tls: good });
    const result = await sendWebhook(`https://hooks.example.test:${server.port}/in`, HEADERS, BODY, tlsSettings(resolverFor().resolve));
    expect(result).toMatchObject({ statusCode: null, delivered: false });
    expect(result.error).toMatch(/self[- ]signed|certificate/i);
    expect(server.received).toHaveLength(0);
  });
});
