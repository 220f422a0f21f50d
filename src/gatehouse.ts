/**
 * @module The library face: createGatehouse(config) wires configuration, database, stores and
 * flows into one Web-standard fetch handler. The Node server is a thin shell around it.
 */
import type { Hono } from 'hono';
import { parse as parseCookies } from 'hono/utils/cookie';
import type { AppEnv } from './http/env.js';
import { createApp } from './app.js';
import { createBackgroundTasks } from './background.js';
import { sweepExpiredRows, type SweepReport } from './sweep.js';
import { systemClock, type Clock } from './clock.js';
import { ConfigError, type Config } from './config.js';
import { migrateToLatest, openDatabase, type DatabaseHandle } from './db/connect.js';
import { createEnvelope } from './crypto/envelope.js';
import { createSignInCodeKey } from './email-sign-in/flow.js';
import { createAdminStore } from './db/admin-store.js';
import { createStores, type Stores } from './db/stores.js';
import { createConsumedSignInStore } from './db/token-stores.js';
import type { DeliveryReport } from './outbox/dispatcher.js';
import { createConsoleMailer } from './outbox/console-mailer.js';
import type { Mailer } from './outbox/outbox.js';
import { createEmailPump } from './outbox/pump.js';
import { createSmtpMailer } from './outbox/smtp-mailer.js';
import { secureRandom, type RandomReader } from './random.js';
import type { ConnectionInfo } from './http/env.js';
import { deviceCookieSettings } from './limits/device-cookie.js';
import { createDeviceTokenKey } from './limits/device-token.js';
import { memoryLimiterBackend, openLimiterBackend, type LimiterBackend, type LimiterStatus } from './limits/limiter-backend.js';
import { createLoginLock, type LoginLock } from './limits/login-lock.js';
import { createRateLimits } from './limits/rate-limits.js';
import { createLogger, type Logger } from './logger.js';
import { createRefusalCounter } from './audit/refusal-counter.js';
import { observeAuditEvents } from './metrics/audit-observer.js';
import { createMetrics } from './metrics/metrics.js';
import { challengeCookieSettings, createChallengeKey } from './mfa/challenge.js';
import { createHashPool } from './credentials/hash-pool.js';
import { createHibpBreachCheck } from './credentials/breach-check.js';
import { createBcryptHasher, createSecretHasher, type PasswordHasher } from './credentials/hasher.js';
import { RESET_TOKEN_BCRYPT_ROUNDS } from './password-reset/flow.js';
import { pendingLinkCompleter } from './oauth/flow.js';
import { createOAuthSetup, type ProviderHTTPSettings } from './oauth/setup.js';
import { createPasskeyChallengeKey, passkeyCookieSettings } from './passkeys/challenge.js';
import { relyingPartyOf } from './passkeys/relying-party.js';
import { validateSessionToken } from './session/flow.js';
import { createLastSeenRecorder } from './session/last-seen.js';
import { createSessionTokenCodec } from './session/token.js';
import { toPublicUser, type PublicUser } from './users/user.js';

export interface GatehouseOptions {
  clock?: Clock;
  logger?: Logger;
  hasher?: PasswordHasher;
  random?: RandomReader;
  /**
   * Sends queued emails. Default: printed to the console outside production with a loopback
   * BASE_URL (`config.devConveniences`); otherwise none until one is configured — emails stay
   * queued (SPEC §1).
   */
  mailer?: Mailer | null;
  /** An already open database (tests pass one bound to a throwaway PostgreSQL schema). */
  database?: DatabaseHandle;
  /** The breached-password check's time bound (PASSWORD_BREACH_CHECK=hibp; tests shorten it). */
  breachCheckHTTP?: { timeoutMs?: number };
  /** Outbound calls to sign-in providers: fetch and time bound (tests point them at a local fake). */
  providerHTTP?: ProviderHTTPSettings;
}

export interface GatehouseSession {
  user: PublicUser;
  /** `methods`: how the sign-in was proven (`password`, `totp`, `recovery_code`, `github`, `passkey`, …), so an app can demand a second factor. */
  session: { id: string; expires: string; methods: readonly string[] };
}

export interface Gatehouse {
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
   * Deletes expired sessions, audit rows past AUDIT_RETENTION_DAYS, spent verification and
   * reset tokens and expired consumed sign-ins, as of `now` (default: the clock), after writing
   * the summaries of refusal windows over by then (audit/refusal-counter.ts). The server
   * runs it at start and hourly; throws on a database failure.
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

/**
 * `ready`; `degraded` while the limits count in this instance's memory because their shared store
 * does not answer (the service works: it stays in rotation); `unavailable` while the database
 * does not answer.
 */
export interface Readiness {
  status: 'ready' | 'degraded' | 'unavailable';
  database: 'ok' | 'unreachable';
  limiter: LimiterStatus;
}

/** How often the summaries of refusal windows that ended are written (audit/refusal-counter.ts). */
const REFUSAL_FLUSH_INTERVAL_MS = 60_000;

/**
 * @example
 * const gatehouse = await createGatehouse(loadConfig(process.env));
 * app.all('/api/auth/*', (c) => gatehouse.fetch(c.req.raw));
 */
export async function createGatehouse(config: Readonly<Config>, options: GatehouseOptions = {}): Promise<Gatehouse> {
  if (config.jwtSecret === null) {
    throw new ConfigError(['JWT_SECRET: required; set it to a random string of at least 32 characters']);
  }
  const clock = options.clock ?? systemClock;
  const logger = options.logger ?? createLogger({ level: config.logLevel });
  const database = options.database ?? openDatabase(config.database, { queryTimeoutMs: config.databaseQueryTimeoutMs });
  let limiterBackend;
  try {
    if (config.migrateOnStart) await migrateToLatest(database);
    limiterBackend = await openLimiterBackend({
      redisUrl: config.redisUrl,
      redisTimeoutMs: config.redisTimeoutMs,
      postgresPool: database.postgresPool,
      keyPrefix: config.redisKeyPrefix,
      logger,
    });
  } catch (error) {
    await database.close();
    throw error;
  }
  // Counted in plain numbers on the request path; prom-client loads on the first scrape (metrics/).
  const metrics = createMetrics({ token: config.metricsToken, db: database.kysely, hashPool: () => hashPool.load(), logger });
  const limits = createRateLimits(limiterBackend, config.rateLimits, { onRefused: metrics.recorder.rateLimitRefused });
  // Each instance renders its own metrics and Prometheus scrapes every instance: RATE_LIMIT_METRICS
  // counts in this instance's memory, so adding instances never makes a scraper's budget run out.
  const scrapeLimits = createRateLimits(memoryLimiterBackend(), config.rateLimits, { onRefused: metrics.recorder.rateLimitRefused });
  const loginLock = createLoginLock(limiterBackend, config.lockout);

  // Past a subject's first refusal in a window, refusals by a limit are counted, not written one
  // by one (audit/refusal-counter.ts). The metrics observer wraps it, so it still sees each one.
  const databaseStores = createStores(database.kysely, database.dialect);
  const refusals = createRefusalCounter(databaseStores.audit, { logger });
  const refusalFlush = setInterval(() => void refusals.flushEnded(clock.now()), REFUSAL_FLUSH_INTERVAL_MS);
  refusalFlush.unref();
  // Sign-ins and locks are counted from the audit rows the flows write (metrics/audit-observer.ts).
  const stores = observeAuditEvents({ ...databaseStores, audit: refusals.audit }, metrics.recorder);
  const consumedSignIns = createConsumedSignInStore(database.kysely);
  // Secure by the address people use, not by NODE_ENV (config.ts, httpsBaseUrl).
  const cookie = { name: config.sessionCookieName, secure: config.httpsBaseUrl };
  const background = createBackgroundTasks(logger);
  const session = {
    sessions: stores.sessions,
    tokens: createSessionTokenCodec(config.jwtSecret),
    sessionExpiresInSeconds: config.sessionExpiresInSeconds,
    onSeen: createLastSeenRecorder(stores.sessions, background),
    idleTimeoutMs: config.sessionIdleTimeoutSeconds === null ? null : config.sessionIdleTimeoutSeconds * 1000,
  };
  const hashPool = createHashPool();
  const hasher = options.hasher ?? createBcryptHasher({ rounds: config.bcryptRounds, pool: hashPool });
  const random = options.random ?? secureRandom;
  const breachCheck =
    config.passwordBreachCheck.kind === 'hibp'
      ? createHibpBreachCheck({ rangeUrl: config.passwordBreachCheck.rangeUrl, logger, ...options.breachCheckHTTP })
      : null;
  const mailer = options.mailer !== undefined ? options.mailer : chooseMailer(config, logger);
  const emailPump = createEmailPump({
    outbox: stores.outbox,
    mailer,
    clock,
    logger,
    maxAttempts: config.mail.maxAttempts,
    afterPurge: () => database.scrubPurgedData(),
  });
  const adminStore = createAdminStore(database.kysely);
  const registrationOf = async (userId: string) => {
    const [created] = await adminStore.searchAuditEvents({ userId, type: 'user_created', since: null, until: null, limit: 1, beforeId: null });
    return created === undefined ? null : { ip: created.ip, userAgent: created.userAgent };
  };
  const verification = { stores, random, baseUrl: config.baseUrl, appName: config.mail.appName, onEmailQueued: emailPump.kick, limits, registrationOf };

  const notices = {
    limits,
    logger,
    appName: config.mail.appName,
    baseUrl: config.baseUrl,
    maxFailures: config.lockout.maxFailures,
    lockedForMinutes: Math.ceil(config.lockout.durationSeconds / 60),
    onEmailQueued: emailPump.kick,
  };
  const readiness = createReadinessCheck(database, limiterBackend, logger);
  // Two-factor secrets are sealed with ENCRYPTION_KEY_BASE64, or outside production with the key
  // generated into the data folder; with neither, setup answers 503 naming the variable.
  const mfaKeys = config.encryptionKeys.length > 0 ? config.encryptionKeys : config.generatedEncryptionKey !== null ? [config.generatedEncryptionKey] : [];
  const oauthSetup = createOAuthSetup(config, options.providerHTTP);
  const mfa = {
    stores,
    hasher,
    loginLock,
    notices,
    background,
    random,
    limits,
    session,
    appName: config.mail.appName,
    challengeKey: createChallengeKey(config.jwtSecret),
    spentChallenges: consumedSignIns,
    envelope: mfaKeys.length > 0 ? createEnvelope(mfaKeys) : null,
    // A provider sign-in into a 2FA account links only at its code step (oauth/flow.ts).
    afterSecondFactor: pendingLinkCompleter({
      stores,
      providers: oauthSetup.providers,
      appName: config.mail.appName,
      baseUrl: config.baseUrl,
      limits,
      logger,
      onEmailQueued: emailPump.kick,
    }),
  };
  const app = createApp({
    admin: config.adminApiKey === null ? null : { apiKey: config.adminApiKey, limits, flow: { stores, admin: adminStore, loginLock } },
    config,
    clock,
    logger,
    metrics: { ...metrics, limits: scrapeLimits },
    database,
    cookie,
    deviceCookie: deviceCookieSettings(config.httpsBaseUrl),
    session,
    readiness,
    password: {
      stores,
      hasher,
      breachCheck,
      session,
      verification,
      limits,
      loginLock,
      device: { key: createDeviceTokenKey(config.jwtSecret), random },
      notices,
      background,
    },
    mfa,
    emailSignIn: {
      stores,
      random,
      baseUrl: config.baseUrl,
      appName: config.mail.appName,
      signup: config.emailSignInSignup,
      codeKey: createSignInCodeKey(config.jwtSecret),
      limits,
      loginLock,
      session,
      notices,
      background,
      onEmailQueued: emailPump.kick,
    },
    challengeCookie: challengeCookieSettings(config.httpsBaseUrl),
    passkeys: {
      stores,
      hasher,
      loginLock,
      notices,
      background,
      random,
      limits,
      session,
      relyingParty: relyingPartyOf({ baseUrl: config.baseUrl, trustedOrigins: config.trustedOrigins, appName: config.mail.appName }),
      challengeKey: createPasskeyChallengeKey(config.jwtSecret),
      spentChallenges: consumedSignIns,
    },
    passkeyCookie: passkeyCookieSettings(config.httpsBaseUrl),
    account: {
      stores,
      hasher,
      breachCheck,
      loginLock,
      limits,
      random,
      notices,
      background,
      baseUrl: config.baseUrl,
      appName: config.mail.appName,
      onEmailQueued: emailPump.kick,
    },
    verification,
    reset: {
      stores,
      random,
      baseUrl: config.baseUrl,
      appName: config.mail.appName,
      hasher,
      breachCheck,
      tokenHasher: createSecretHasher(hashPool, RESET_TOKEN_BCRYPT_ROUNDS),
      onEmailQueued: emailPump.kick,
      limits,
      clearLoginFailures: (email, now) => loginLock.clearEmail(email, now),
      notices: { limits, logger },
    },
    background,
    oauth: {
      ...oauthSetup,
      baseUrl: config.baseUrl,
      defaultReturnTo: config.defaultReturnTo,
      random,
      stores,
      session,
      appName: config.mail.appName,
      logger,
      onEmailQueued: emailPump.kick,
      limits,
      consumedSignIns,
    },
  });

  const gatehouse: Gatehouse = {
    config,
    stores,
    loginLock,
    fetch: async (request, info = {}) => app.fetch(request, info),
    async getSession(request) {
      const header = request.headers.get('cookie');
      const value = header ? parseCookies(header, cookie.name)[cookie.name] : undefined;
      if (value === undefined) return null;
      const valid = await validateSessionToken(session, value, clock.now());
      if (valid === null) return null;
      return {
        user: toPublicUser(valid.user),
        session: { id: valid.session.id, expires: valid.session.expiresAt.toISOString(), methods: valid.session.methods },
      };
    },
    // Work still running off a response path may be about to queue an email: let it finish.
    deliverQueuedEmails: async () => {
      await background.settle();
      return emailPump.drain();
    },
    async sweep(now = clock.now()) {
      await refusals.flushEnded(now);
      return sweepExpiredRows({ stores, consumedSignIns, auditRetentionDays: config.auditRetentionDays }, now);
    },
    readiness,
    async close() {
      try {
        clearInterval(refusalFlush);
        await background.settle();
        // The counts of windows not yet over are written now, or they would be lost.
        await refusals.flushAll();
        await emailPump.stop();
        await mailer?.close?.();
        await hashPool.close();
        await limiterBackend.close();
      } finally {
        await database.close();
      }
    },
  };
  appOfGatehouse.set(gatehouse, app);
  return gatehouse;
}

/**
 * Each Gatehouse's Hono app, for the project's own tests (test/openapi.test.ts walks its routing
 * table); not part of the library's face (index.ts does not export it).
 */
export const appOfGatehouse = new WeakMap<Gatehouse, Hono<AppEnv>>();

/** Asks the database and the limiter store at once (each bounded to 1.5 s) and logs each change of status. */
function createReadinessCheck(database: DatabaseHandle, limiterBackend: LimiterBackend, logger: Logger): () => Promise<Readiness> {
  let lastStatus: Readiness['status'] = 'ready';
  return async () => {
    const [databaseState, limiter] = await Promise.all([
      database.ping().then(
        () => 'ok' as const,
        () => 'unreachable' as const,
      ),
      limiterBackend.checkStatus(),
    ]);
    // A limiter on its in-memory fallback still protects every endpoint, only per instance.
    const status = databaseState === 'unreachable' ? 'unavailable' : limiter === 'memory-fallback' ? 'degraded' : 'ready';
    const readiness: Readiness = { status, database: databaseState, limiter };
    if (status !== lastStatus) {
      // A warning both ways: whoever watches warnings sees the end of an incident too.
      logger.warn({ readiness, previous: lastStatus }, `readiness changed from ${lastStatus} to ${status}`);
      lastStatus = status;
    }
    return readiness;
  };
}

/**
 * SMTP when SMTP_URL is set; otherwise the console while development conveniences are on
 * (outside production, with a loopback BASE_URL: config.ts), and else no sender at all: emails
 * stay queued (SPEC §1), their links never printed where someone other than the developer at
 * the machine may read them. With MAIL_DELIVERY=worker only `gatehouse mail` sends, and the
 * server just queues.
 */
function chooseMailer(config: Readonly<Config>, logger: Logger): Mailer | null {
  if (config.mail.delivery === 'worker') return null;
  if (config.mail.smtpUrl !== null) return createSmtpMailer({ url: config.mail.smtpUrl, from: config.mail.from, tls: config.mail.smtpTls });
  if (config.devConveniences) return createConsoleMailer();
  if (config.mode === 'production') {
    logger.warn('No email sender is configured (SMTP_URL): emails stay queued in email_outbox until one is.');
  } else {
    logger.warn(
      { baseUrl: config.baseUrl },
      'No email sender is configured (SMTP_URL), and BASE_URL is not localhost, 127.0.0.1 or [::1]: emails are not printed to the console; they stay queued in email_outbox until SMTP_URL is set.',
    );
  }
  return null;
}
