/**
 * Clients that read their answers slowly, over raw sockets against the Node server: they must not
 * make the server hold memory per connection (a third-party slow-read run took a build from
 * 100 MB to 2.67 GB with 500 of them asking for the 1.7 MB Swagger UI script, by a copy of it per
 * answer), and a connection that never finishes reading is closed after the answer deadline.
 */
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { loadConfig } from '../src/config.js';
import { createLogger } from '../src/logger.js';
import { startServer } from '../src/server.js';
import { TEST_JWT_SECRET } from './support/harness.js';
import { startServerProcess, type ServerProcess } from './support/server-process.js';

const BUNDLE = '/assets/swagger-ui/swagger-ui-bundle.js';
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** The process's resident memory in MB, from /proc (Linux). */
function residentMegabytes(pid: number): number {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1]) / 1024;
}

interface SlowReader {
  socket: net.Socket;
  /** Resolves when the answer has begun to arrive; the socket then reads nothing more. */
  begun: Promise<void>;
  received: number;
  closed: boolean;
}

/** Asks for `pathname` `pipelined` times at once, takes the first bytes of the answer, then stops reading. */
function slowReader(url: string, pathname: string, pipelined: number): SlowReader {
  const { hostname, port } = new URL(url);
  const socket = net.connect(Number(port), hostname);
  const reader: SlowReader = { socket, begun: Promise.resolve(), received: 0, closed: false };
  reader.begun = new Promise((resolve) => {
    socket.once('data', (chunk: Buffer) => {
      reader.received += chunk.length;
      socket.pause();
      resolve();
    });
  });
  socket.on('error', () => undefined);
  socket.on('close', () => (reader.closed = true));
  socket.write(`GET ${pathname} HTTP/1.1\r\nHost: x\r\n\r\n`.repeat(pipelined));
  return reader;
}

describe('slow readers', () => {
  let server: ServerProcess;
  let dir: string;

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-slow-'));
    server = await startServerProcess({
      cwd: dir,
      env: { DATABASE_URL: `sqlite:${path.join(dir, 'db.sqlite')}`, JWT_SECRET: TEST_JWT_SECRET },
    });
  });

  afterAll(async () => {
    await server?.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  test.skipIf(!fs.existsSync('/proc/self/status'))(
    '150 connections that stop reading the 1.7 MB viewer script cost the server no copy of it each; others are still served',
    async () => {
      // Read once, so the file itself is in memory before the baseline.
      const bundle = await (await fetch(`${server.url}${BUNDLE}`)).arrayBuffer();
      expect(bundle.byteLength).toBeGreaterThan(1_000_000);
      const before = residentMegabytes(server.pid);

      const readers = Array.from({ length: 150 }, () => slowReader(server.url, BUNDLE, 3));
      try {
        // Every answer has begun, so each has been handed to its socket whole.
        await Promise.all(readers.map((reader) => reader.begun));
        let peak = 0;
        for (let sample = 0; sample < 5; sample++) {
          peak = Math.max(peak, residentMegabytes(server.pid));
          await sleep(200);
        }
        // A copy per answer would be 150 × 1.7 MB = 255 MB at the least.
        expect(peak - before).toBeLessThan(100);

        const started = Date.now();
        const health = await fetch(`${server.url}/healthz`);
        expect(health.status).toBe(200);
        const script = await fetch(`${server.url}/assets/app.js`);
        expect(script.status).toBe(200);
        expect((await script.arrayBuffer()).byteLength).toBeGreaterThan(0);
        expect(Date.now() - started).toBeLessThan(10_000);
        expect(readers.filter((reader) => reader.closed)).toEqual([]);
      } finally {
        for (const reader of readers) reader.socket.destroy();
      }
    },
    60_000,
  );
});

describe('the answer deadline', () => {
  test('a connection whose answers are not taken by the deadline is closed; one that reads is served whole', async () => {
    const lines: string[] = [];
    const logger = createLogger({
      level: 'debug',
      destination: new Writable({
        write(chunk, _encoding, done) {
          lines.push(chunk.toString());
          done();
        },
      }),
    });
    const config = loadConfig({
      PORT: '0',
      HOST: '127.0.0.1',
      DATABASE_URL: 'sqlite::memory:',
      JWT_SECRET: TEST_JWT_SECRET,
      BCRYPT_ROUNDS: '4',
      LOG_LEVEL: 'debug',
    });
    const running = await startServer(config, { logger, mailer: null, connectionLimits: { answerDeadlineMs: 1_000 } });
    try {
      const whole = (await (await fetch(`${running.url}${BUNDLE}`)).arrayBuffer()).byteLength;
      // Six answers of 1.7 MB: more than the kernel's socket buffers take, so the last wait in the server.
      const reader = slowReader(running.url, BUNDLE, 6);
      await reader.begun;
      const closedByDeadline = (): boolean => lines.some((line) => line.includes('had not taken its answer by the deadline'));
      // Bounded wait: the deadline is 1 s; 30 s is only the point at which the test gives up.
      for (let waited = 0; !closedByDeadline() && waited < 30_000; waited += 100) await sleep(100);
      expect(closedByDeadline()).toBe(true);
      // Reading again, the client finds the connection ended before all six answers.
      reader.socket.on('data', (chunk: Buffer) => (reader.received += chunk.length));
      reader.socket.resume();
      for (let waited = 0; !reader.closed && waited < 30_000; waited += 100) await sleep(100);
      expect(reader.closed).toBe(true);
      expect(reader.received).toBeLessThan(6 * whole);

      // A reader that keeps reading gets it all, and the server serves on.
      expect((await (await fetch(`${running.url}${BUNDLE}`)).arrayBuffer()).byteLength).toBe(whole);
      expect((await fetch(`${running.url}/healthz`)).status).toBe(200);
    } finally {
      await running.stop();
    }
  }, 80_000);
});
