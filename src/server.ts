/**
 * @module The Node shell around the library face: listen, stop gracefully. On SIGTERM/SIGINT it
 * stops accepting connections, answers 503 to new requests on open keep-alive connections,
 * lets in-flight requests finish, then closes the database.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { getRequestListener, RequestError, type HttpBindings, type Http2Bindings } from '@hono/node-server';
import { RESPONSE_ALREADY_SENT } from '@hono/node-server/utils/response';
import { systemClock, type Clock } from './clock.js';
import { withBoundPort, type Config } from './config.js';
import type { ErrorCode } from './errors.js';
import type { NodeHandler } from './capability.js';
import { createGatehouse, type Gatehouse, type GatehouseOptions } from './gatehouse.js';
import type { Logger } from './logger.js';
import { apiSecurityHeaders } from './http/security-headers.js';
import { readNodeBody } from './node-body.js';

const SHUTDOWN_GRACE_MS = 10_000;
/** The sweep of expired rows (sessions, audit past retention, spent tokens) runs at start, then this often. */
const SWEEP_INTERVAL_MS = 60 * 60 * 1000;
/** Retries of failed emails and the purge of expired links run at least this often. */
const EMAIL_DELIVERY_INTERVAL_MS = 30_000;

/**
 * How long one connection may hold the server. A client that sends slowly is bounded by Node's
 * own request timeouts; one that reads slowly is bounded by `answerDeadlineMs`, since a reader
 * that takes a few bytes now and then never looks idle to a socket timeout. What a slow client
 * holds meanwhile is small: answers share their bytes (web/static-asset.ts), and Node stops
 * reading pipelined requests while an answer waits to be written.
 */
export interface ConnectionLimits {
  /** The request line and headers must arrive within this (then 408). */
  headersTimeoutMs: number;
  /** The whole request, body included (at most 16 KiB), must arrive within this (then 408). */
  requestTimeoutMs: number;
  /** An open connection with no request under way is closed after this. */
  keepAliveTimeoutMs: number;
  /**
   * From a request's arrival to the last byte of its answer handed to the network: past this the
   * connection is closed. 120 s lets the largest file, the API reference viewer's 1.7 MB script,
   * reach a client that reads 15 KB/s.
   */
  answerDeadlineMs: number;
}

export const CONNECTION_LIMITS: Readonly<ConnectionLimits> = {
  headersTimeoutMs: 20_000,
  requestTimeoutMs: 30_000,
  keepAliveTimeoutMs: 5_000,
  answerDeadlineMs: 120_000,
};

export interface RunningServer {
  gatehouse: Gatehouse;
  url: string;
  /** Resolves once every in-flight request has finished and the database is closed. */
  stop(): Promise<void>;
}

/**
 * Binds first, then builds the Gatehouse: with PORT=0 and no BASE_URL, its links, allowed origin
 * and OAuth callback need the port the system picked (config.ts, `withBoundPort`). A request that
 * arrives meanwhile waits for the start to finish.
 */
export async function startServer(
  config: Readonly<Config>,
  options: GatehouseOptions & { logger: Logger; connectionLimits?: Partial<ConnectionLimits> },
): Promise<RunningServer> {
  const { logger } = options;
  const limits: ConnectionLimits = { ...CONNECTION_LIMITS, ...options.connectionLimits };
  const shutdownHeaders = apiSecurityHeaders(config);
  const gate = createRequestGate(shutdownHeaders, logger);
  const listener = getRequestListener(gate.handle, {
    // An HTTP/1.0 request may come without Host: its URL is then built on the listening address.
    hostname: config.host,
    errorHandler: (error) => answerAdapterError(error, shutdownHeaders, logger),
  });
  const server = createNodeServer(limits, { listener, fast: gate.answerFast }, shutdownHeaders, logger);

  const port = await listen(server, config);
  const url = `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${port}`;
  let gatehouse: Gatehouse;
  try {
    gatehouse = await createGatehouse(withBoundPort(config, port), options);
  } catch (error) {
    // Requests that came meanwhile get the 503 of a closing server, and nothing new gets in.
    gate.open(null);
    server.close();
    server.closeIdleConnections();
    throw error;
  }
  gate.open(gatehouse);
  const background = startBackgroundWork(gatehouse, options.clock ?? systemClock, logger);
  // Webhook delivery (WEBHOOK_DELIVERY=server); gatehouse.close() stops it after the requests.
  gatehouse.startWorkers();

  let stopping: Promise<void> | null = null;
  const stop = (): Promise<void> => {
    stopping ??= new Promise<void>((resolve) => {
      gate.drain();
      background.stop();
      const force = setTimeout(() => server.closeAllConnections(), SHUTDOWN_GRACE_MS);
      force.unref();
      server.close(() => {
        clearTimeout(force);
        // A sweep still running finishes (or fails) before the database closes under it.
        Promise.resolve(background.sweepUnderWay())
          .then(() => gatehouse.close())
          .catch((error: unknown) => logger.error({ err: error }, 'error while closing the database'))
          .finally(resolve);
      });
      server.closeIdleConnections();
    });
    return stopping;
  };

  return { gatehouse, url, stop };
}

/** Where requests go while the server starts (they wait), runs, and drains (503). */
interface RequestGate {
  handle: (request: Request, env: HttpBindings | Http2Bindings) => Response | Promise<Response>;
  /** The start finished: requests go to `gatehouse`; null when it failed, and they get the 503. */
  open(gatehouse: Gatehouse | null): void;
  /** The shutdown began: new requests get the 503, and answers in flight close their connection. */
  drain(): void;
  /**
   * Gives the request to a capability's fast handler (the session check, the login's refusals)
   * when one takes it, and returns true; `goOn` is called if that handler hands it back — served
   * even if the drain began meanwhile, as a request in flight is. False: the adapter takes it.
   */
  answerFast(incoming: IncomingMessage, outgoing: ServerResponse, goOn: () => void): boolean;
}

function createRequestGate(shutdownHeaders: Readonly<Record<string, string>>, logger: Logger): RequestGate {
  let draining = false;
  let ready: Gatehouse | null = null;
  // Requests a fast handler took before the drain began and handed back: still answered by the app.
  const admitted = new WeakSet<IncomingMessage | Http2Bindings['incoming']>();
  let started!: (gatehouse: Gatehouse | null) => void;
  const starting = new Promise<Gatehouse | null>((resolve) => (started = resolve));
  const answer = (gatehouse: Gatehouse, request: Request, env: HttpBindings | Http2Bindings): Promise<Response> => {
    const { incoming } = env;
    // The OpenID Connect engine answers on Node's objects itself (a prefix test on the raw target).
    const nodeHandler = gatehouse.nodeRoute(incoming.url ?? '/');
    if (nodeHandler !== null) return answerOnNode(nodeHandler, env as HttpBindings, draining, logger);
    const info = {
      remoteAddress: incoming.socket.remoteAddress,
      readBody: (maxBytes: number) => readNodeBody(incoming, maxBytes),
      // The bindings object itself: nothing more is made per request for it.
      node: env as { incoming: IncomingMessage; outgoing: ServerResponse },
    };
    return gatehouse.fetch(request, info).then((response) => {
      // A request in flight when the drain began: close its connection with this answer.
      // Otherwise the client's keep-alive connection stays open, idle, and the shutdown waits
      // for it to time out (about 5 s) before the database can be closed.
      if (draining) response.headers.set('connection', 'close');
      return response;
    });
  };
  return {
    handle: (request, env) => {
      if (draining && !admitted.has(env.incoming)) return shuttingDownAnswer(shutdownHeaders);
      if (ready !== null) return answer(ready, request, env);
      return starting.then((gatehouse) => (gatehouse === null || draining ? shuttingDownAnswer(shutdownHeaders) : answer(gatehouse, request, env)));
    },
    open(gatehouse) {
      ready = gatehouse;
      started(gatehouse);
    },
    drain() {
      draining = true;
    },
    answerFast(incoming, outgoing, goOn) {
      if (ready === null || draining) return false;
      const handler = ready.fastRoute(incoming);
      if (handler === null) return false;
      admitted.add(incoming);
      handler(incoming, outgoing, () => draining).then(
        (answered) => answered || goOn(),
        (error: unknown) => {
          logger.error({ err: error }, 'the fast path failed');
          if (!outgoing.headersSent) goOn();
          else outgoing.destroy();
        },
      );
      return true;
    },
  };
}

/**
 * A request a capability answers on Node's objects (the OpenID Connect engine). A fault before it
 * began its answer (the database down while its keys are read) is a 503 in the JSON error shape.
 */
async function answerOnNode(handler: NodeHandler, env: HttpBindings, draining: boolean, logger: Logger): Promise<Response> {
  const { incoming, outgoing } = env;
  if (draining) outgoing.setHeader('connection', 'close');
  try {
    await handler(incoming, outgoing);
    return RESPONSE_ALREADY_SENT;
  } catch (error) {
    logger.error({ err: error }, 'the OpenID Connect provider could not answer');
    if (outgoing.headersSent) {
      outgoing.destroy();
      return RESPONSE_ALREADY_SENT;
    }
    const code: ErrorCode = 'service_unavailable';
    return new Response(JSON.stringify({ error: code, message: 'The service is unavailable. Try again shortly.' }), {
      status: 503,
      headers: { 'content-type': 'application/json; charset=utf-8', 'retry-after': '1', 'cache-control': 'no-store' },
    });
  }
}

/** Node's HTTP server under `limits`; an HTTP/1.1 request without Host is refused before the adapter. */
function createNodeServer(
  limits: ConnectionLimits,
  { listener, fast }: { listener: ReturnType<typeof getRequestListener>; fast: RequestGate['answerFast'] },
  shutdownHeaders: Readonly<Record<string, string>>,
  logger: Logger,
): Server {
  const server: Server = createServer(
    {
      headersTimeout: limits.headersTimeoutMs,
      requestTimeout: limits.requestTimeoutMs,
      keepAliveTimeout: limits.keepAliveTimeoutMs,
      // How often the two timeouts above are checked (Node's default, 30 s, would let them run late by as much).
      connectionsCheckingInterval: Math.min(5_000, limits.headersTimeoutMs),
      // Node would answer a missing Host with an empty 400 of its own; the listener below answers it.
      requireHostHeader: false,
    },
    (incoming: IncomingMessage, outgoing: ServerResponse) => {
      holdToDeadline(outgoing, limits.answerDeadlineMs, logger);
      if (incoming.headers.host === undefined && incoming.httpVersion !== '1.0') {
        writeMalformedRequest(outgoing, shutdownHeaders, 'An HTTP/1.1 request needs a Host header.');
        return;
      }
      const toAdapter = (): void => void listener(incoming, outgoing);
      if (!fast(incoming, outgoing, toAdapter)) toAdapter();
    },
  );
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Socket) => answerUnreadableRequest(error, socket, shutdownHeaders));
  return server;
}

/** Listens on the configured host and port; resolves with the port bound (the system's pick for PORT=0). */
async function listen(server: Server, config: Readonly<Pick<Config, 'host' | 'port'>>): Promise<number> {
  await new Promise<void>((resolve, reject) => {
    server.once('listening', resolve);
    server.once('error', reject);
    server.listen(config.port, config.host);
  });
  const address = server.address();
  return typeof address === 'object' && address ? address.port : config.port;
}

interface BackgroundWork {
  /** Clears both timers; a sweep under way goes on. */
  stop(): void;
  /** The sweep running now, if any. */
  sweepUnderWay(): Promise<void> | null;
}

/** The sweep of expired rows (now, then every SWEEP_INTERVAL_MS) and the rounds of email delivery. */
function startBackgroundWork(gatehouse: Gatehouse, clock: Clock, logger: Logger): BackgroundWork {
  // A failed sweep is logged and tried again at the next tick; it never stops the server.
  let sweeping: Promise<void> | null = null;
  const runSweep = (): void => {
    if (sweeping !== null) return;
    sweeping = gatehouse
      .sweep(clock.now())
      .then(
        (report) => logger.debug({ deleted: report }, 'swept expired rows'),
        (error: unknown) => logger.warn({ err: error }, 'could not sweep expired rows'),
      )
      .finally(() => {
        sweeping = null;
      });
  };
  runSweep();
  const sweep = setInterval(runSweep, SWEEP_INTERVAL_MS);
  sweep.unref();
  const emails = setInterval(() => {
    gatehouse.deliverQueuedEmails().catch((error: unknown) => logger.warn({ err: error }, 'could not deliver queued emails'));
  }, EMAIL_DELIVERY_INTERVAL_MS);
  emails.unref();
  return {
    stop() {
      clearInterval(sweep);
      clearInterval(emails);
    },
    sweepUnderWay: () => sweeping,
  };
}

/**
 * The answer to a request that arrives on an open keep-alive connection while the server drains:
 * 503 with Retry-After, the JSON error shape, and the same security headers as every other
 * answer (it never reaches the app, which adds them elsewhere).
 */
export function shuttingDownAnswer(securityHeaderRecord: Readonly<Record<string, string>>): Response {
  return new Response(JSON.stringify({ error: 'service_unavailable', message: 'The server is shutting down. Try again shortly.' }), {
    status: 503,
    headers: { ...securityHeaderRecord, 'content-type': 'application/json; charset=utf-8', connection: 'close', 'retry-after': '1' },
  });
}

/** The JSON error shape of a request the server shell refuses before the app sees it. */
function malformedRequestBody(message: string): string {
  const code: ErrorCode = 'malformed_request';
  return JSON.stringify({ error: code, message });
}

/** The security headers, and the connection closed: the rest of what the client sent is not read. */
function refusalHeaders(securityHeaderRecord: Readonly<Record<string, string>>, body: string): Record<string, string> {
  return {
    ...securityHeaderRecord,
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': String(Buffer.byteLength(body)),
    'Cache-Control': 'no-store',
    Connection: 'close',
  };
}

function writeMalformedRequest(outgoing: ServerResponse, securityHeaderRecord: Readonly<Record<string, string>>, message: string): void {
  const body = malformedRequestBody(message);
  outgoing.writeHead(400, refusalHeaders(securityHeaderRecord, body)).end(body);
}

/**
 * What the Node adapter could not turn into a Request — a Host header that is not a host, a
 * backslash in the path, a target that is not a path (`OPTIONS *`) — is 400 malformed_request;
 * the adapter wrote an empty text/plain 400. Anything else reaching here is a fault of the app's
 * fetch (it answers its own errors): logged as a bounded summary (logger.ts), answered 500.
 */
function answerAdapterError(error: unknown, securityHeaderRecord: Readonly<Record<string, string>>, logger: Logger): Response {
  if (error instanceof RequestError) {
    const body = malformedRequestBody('The request target or its Host header is not valid.');
    return new Response(body, { status: 400, headers: refusalHeaders(securityHeaderRecord, body) });
  }
  const requestId = randomUUID();
  logger.error({ requestId, err: error }, 'unhandled error');
  const code: ErrorCode = 'internal_error';
  const body = JSON.stringify({ error: code, message: 'Something went wrong on our side.', requestId });
  return new Response(body, { status: 500, headers: { ...refusalHeaders(securityHeaderRecord, body), 'X-Request-Id': requestId } });
}

/**
 * Closes the connection if this answer is not handed to the network within `deadlineMs` of the
 * request's arrival (ConnectionLimits.answerDeadlineMs). One timer per request, cleared as soon as
 * the answer is written or the connection ends.
 */
function holdToDeadline(outgoing: ServerResponse, deadlineMs: number, logger: Logger): void {
  const deadline = setTimeout(() => {
    // Debug only: a flood of slow readers would otherwise be a flood of lines.
    logger.debug({ deadlineMs }, 'closed a connection that had not taken its answer by the deadline');
    outgoing.destroy();
  }, deadlineMs);
  deadline.unref();
  outgoing.once('close', () => clearTimeout(deadline));
}

/** What Node's HTTP parser could not read, by its error code; anything else is a 400. */
const UNREADABLE_REQUESTS: Readonly<Record<string, { status: number; reason: string; message: string }>> = {
  HPE_HEADER_OVERFLOW: { status: 431, reason: 'Request Header Fields Too Large', message: 'The request headers are too large.' },
  ERR_HTTP_REQUEST_TIMEOUT: { status: 408, reason: 'Request Timeout', message: 'The request did not arrive in time.' },
};

/**
 * A request Node's HTTP parser cannot read (a control byte in a header, a broken Content-Length or
 * chunk, headers past 16 KiB) never reaches the app, and Node would answer an empty 400. This
 * answers the JSON error shape instead, with the security headers, under the same rule as Node's
 * own: only on a connection with no answer under way, and the connection is then closed.
 */
function answerUnreadableRequest(error: NodeJS.ErrnoException, socket: Socket, headers: Readonly<Record<string, string>>): void {
  // Node's own test: the answer in flight on this connection, if any, has not begun.
  const answerBegun = (socket as Socket & { _httpMessage?: ServerResponse | null })._httpMessage?.headersSent === true;
  if (error.code !== 'ECONNRESET' && socket.writable && !answerBegun) {
    const { status, reason, message } = UNREADABLE_REQUESTS[error.code ?? ''] ?? {
      status: 400,
      reason: 'Bad Request',
      message: 'The request could not be read as HTTP.',
    };
    const body = malformedRequestBody(message);
    const head = Object.entries(refusalHeaders(headers, body)).map(([name, value]) => `${name}: ${value}\r\n`);
    socket.write(`HTTP/1.1 ${status} ${reason}\r\n${head.join('')}\r\n${body}`);
  }
  socket.destroy(error);
}
