/**
 * @module The library face: createGatehouse(config) builds the shared parts (src/parts.ts), then
 * every capability of the list (src/capabilities.ts), and mounts them in one Web-standard fetch
 * handler (src/app.ts). The Node server is a thin shell around it.
 */
import type { Hono } from 'hono';
import { createApp } from './app.js';
import { CAPABILITIES } from './capabilities.js';
import { builtCapabilities, capabilityWork, type BuiltCapabilities, type CapabilityWork } from './built-capabilities.js';
import type { SweepReport } from './capability.js';
import type { Config } from './config.js';
import type { LoginLock } from './limits/login-lock.js';
import type { AppEnv, ConnectionInfo } from './http/env.js';
import type { DeliveryReport } from './outbox/dispatcher.js';
import { buildSharedParts, type GatehouseOptions, type Infrastructure, type SharedParts } from './parts.js';
import { createReadinessCheck, type Readiness } from './readiness.js';
import { sessionOfRequest, type GatehouseSession } from './session/request-session.js';
import type { Stores } from './stores.js';

export type { GatehouseOptions } from './parts.js';
export type { Readiness } from './readiness.js';
export type { GatehouseSession } from './session/request-session.js';

/** Beside requests and sessions: the capabilities' work off the request path (built-capabilities.ts). */
export interface Gatehouse extends CapabilityWork {
  readonly config: Readonly<Config>;
  /** Storage verbs, for operators' tooling and tests; the HTTP API never needs them. */
  readonly stores: Stores;
  /** The login lock, for operators (for example to lift an email's lock by hand). */
  readonly loginLock: LoginLock;
  /** Answers any Gatehouse request; `info.remoteAddress` is the client's socket address. */
  fetch(request: Request, info?: ConnectionInfo): Promise<Response>;
  /** Reads and validates the session cookie of `request`; null when there is no valid session. */
  getSession(request: Request): Promise<GatehouseSession | null>;
  /** Sends the queued emails that are due now, and drops expired links; for workers and tests. */
  deliverQueuedEmails(): Promise<DeliveryReport>;
  /**
   * Deletes what expired as of `now` (default: the clock) — audit rows past AUDIT_RETENTION_DAYS,
   * spent one-time sign-ins, and each capability's own (sessions, tokens, …) — after writing the
   * summaries of refusal windows over by then (audit/refusal-counter.ts). The server runs it at
   * start and hourly; throws on a database failure.
   */
  sweep(now?: Date): Promise<SweepReport>;
  /**
   * What the public `GET /readyz` answers (only its `status`), with the detail for operators:
   * whether the database answers and where the limits count. Answers within 2 s whatever the
   * database or the limiter store does; a change of status is logged as a warning.
   */
  readiness(): Promise<Readiness>;
  /** Closes the email sender, the hashing threads, the rate limit store and the database. In-flight requests should be finished first. */
  close(): Promise<void>;
}

/** How often the summaries of refusal windows that ended are written (audit/refusal-counter.ts). */
const REFUSAL_FLUSH_INTERVAL_MS = 60_000;
const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * @example
 * const gatehouse = await createGatehouse(loadConfig(process.env));
 * app.all('/api/auth/*', (c) => gatehouse.fetch(c.req.raw));
 */
export async function createGatehouse(config: Readonly<Config>, options: GatehouseOptions = {}): Promise<Gatehouse> {
  const { parts, infrastructure } = await buildSharedParts(config, options);
  const built = CAPABILITIES.map((capability) => capability.build(parts));
  const readiness = createReadinessCheck(parts.database, infrastructure.limiterBackend, parts.logger);
  const app = createApp({ parts, scrapeLimits: infrastructure.scrapeLimits, readiness, routes: built.flatMap((each) => each.routes) });
  const gatehouse = assemble(parts, infrastructure, builtCapabilities(built), app, readiness);
  appOfGatehouse.set(gatehouse, app);
  return gatehouse;
}

/** The gatehouse's face over the built parts: requests, sessions, emails, the sweep and the close. */
function assemble(
  parts: SharedParts,
  infrastructure: Infrastructure,
  built: BuiltCapabilities,
  app: Hono<AppEnv>,
  readiness: () => Promise<Readiness>,
): Gatehouse {
  const { clock, background, database } = parts;
  const { refusals, emailPump } = infrastructure;
  const refusalFlush = setInterval(() => void refusals.flushEnded(clock.now()), REFUSAL_FLUSH_INTERVAL_MS);
  refusalFlush.unref();
  return {
    config: parts.config,
    stores: parts.stores,
    loginLock: parts.loginLock,
    fetch: async (request, info = {}) => app.fetch(request, info),
    getSession: (request) => sessionOfRequest(parts.session, parts.cookie, request, clock.now()),
    // Work still running off a response path may be about to queue an email: let it finish.
    deliverQueuedEmails: async () => {
      await background.settle();
      return emailPump.drain();
    },
    ...capabilityWork(built, background),
    async sweep(now = clock.now()) {
      await refusals.flushEnded(now);
      return sweepExpired(parts, built, now);
    },
    readiness,
    async close() {
      try {
        clearInterval(refusalFlush);
        await background.settle();
        // The counts of windows not yet over are written now, or they would be lost.
        await refusals.flushAll();
        await emailPump.stop();
        await built.stopWorkers();
        await infrastructure.mailer?.close?.();
        await parts.hashPool.close();
        await infrastructure.limiterBackend.close();
      } finally {
        await database.close();
      }
    },
  };
}

/**
 * Bounded growth: the shared parts' expired rows (audit rows past AUDIT_RETENTION_DAYS, expired
 * records of spent one-time sign-ins), then each capability's, in the list's order.
 */
async function sweepExpired(parts: Pick<SharedParts, 'stores' | 'consumedSignIns' | 'config'>, built: BuiltCapabilities, now: Date): Promise<SweepReport> {
  const auditCutoff = new Date(now.getTime() - parts.config.auditRetentionDays * DAY_MS);
  const report: Record<string, number> = {
    auditEvents: await parts.stores.audit.deleteEventsBefore(auditCutoff),
    consumedSignIns: await parts.consumedSignIns.deleteExpiredSignIns(now),
  };
  return { ...report, ...(await built.sweep(now)) };
}

/**
 * Each Gatehouse's Hono app, for the project's own tests (test/openapi.test.ts walks its routing
 * table); not part of the library's face (index.ts does not export it).
 */
export const appOfGatehouse = new WeakMap<Gatehouse, Hono<AppEnv>>();
