/**
 * @module The shared parts every capability is built from (docs/ARCHITECTURE.md): the database
 * and its stores, the clock, randomness, the hash pool, the rate limits and login lock, the email
 * queue and its notices, session issuing, the second-factor challenge, the audit trail's refusal
 * counter and the metrics. Built once per gatehouse by `buildSharedParts`; a capability declares
 * the ones it uses in its `build` parameter's type (src/capability.ts).
 */
import type { AdminStore } from './admin/store.js';
import { createRefusalCounter, type RefusalCounter } from './audit/refusal-counter.js';
import { createBackgroundTasks, type BackgroundTasks } from './background.js';
import { systemClock, type Clock } from './clock.js';
import { ConfigError, type Config } from './config.js';
import { createHibpBreachCheck, type BreachCheck } from './credentials/breach-check.js';
import { createHashPool, type HashPool } from './credentials/hash-pool.js';
import { createBcryptHasher, type PasswordHasher } from './credentials/hasher.js';
import { createAdminStore } from './db/admin-store.js';
import { migrateToLatest, openDatabase, type DatabaseHandle } from './db/connect.js';
import { createStores } from './db/stores.js';
import { createConsumedSignInStore } from './db/token-stores.js';
import { memoryLimiterBackend, openLimiterBackend, type LimiterBackend } from './limits/limiter-backend.js';
import { createLoginLock, type LoginLock } from './limits/login-lock.js';
import { createRateLimits, type RateLimits } from './limits/rate-limits.js';
import { createLogger, type Logger } from './logger.js';
import { observeAuditEvents } from './metrics/audit-observer.js';
import { createMetrics, type Metrics } from './metrics/metrics.js';
import { challengeCookieSettings, createChallengeKey, type Challenge, type ChallengeCookieSettings } from './mfa/challenge.js';
import type { ConsumedSignInStore } from './oauth/store.js';
import type { ProviderHTTPSettings } from './oauth/setup.js';
import { chooseMailer } from './outbox/choose-mailer.js';
import type { LockNoticeDeps } from './outbox/notices.js';
import type { Mailer } from './outbox/outbox.js';
import { createEmailPump, type EmailPump } from './outbox/pump.js';
import { secureRandom, type RandomReader } from './random.js';
import type { RequestContext } from './request-context.js';
import type { SessionCookieSettings } from './session/cookie.js';
import type { SessionDeps } from './session/flow.js';
import { createLastSeenRecorder } from './session/last-seen.js';
import { createSessionTokenCodec } from './session/token.js';
import type { Stores } from './stores.js';

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

/** Work another capability left waiting for a second factor's code step (a provider link: oauth/). */
export type CodeStepHook = (challenge: Challenge, ctx: RequestContext) => Promise<void>;

/**
 * The second-factor challenge every first factor issues (mfa/challenge.ts), and the work that
 * waits for its code step. Capabilities register that work while they are built.
 */
export interface SecondFactorParts {
  /** What the routes of a first factor need to issue the challenge cookie; `onIssued` counts it (metrics). */
  challenge: { key: Uint8Array; random: RandomReader; cookie: ChallengeCookieSettings; onIssued: (firstMethod: string) => void };
  /** Adds work to run after a right code, before the session is issued. */
  onCodeStep(hook: CodeStepHook): void;
  /** Runs that work, in the order it was added. */
  runCodeStepHooks: CodeStepHook;
}

export interface SharedParts {
  config: Readonly<Config>;
  /** JWT_SECRET, checked present: every signed cookie's key is derived from it. */
  jwtSecret: string;
  clock: Clock;
  logger: Logger;
  database: DatabaseHandle;
  /** Every store, its audit rows counted by the metrics and past a limit summarised (audit/refusal-counter.ts). */
  stores: Stores;
  /** Operators' reads (user overview, audit search), for the admin API and the verification page. */
  adminStore: AdminStore;
  /** Spent one-time sign-ins and challenges (provider callbacks, second-factor and passkey challenges). */
  consumedSignIns: ConsumedSignInStore;
  limits: RateLimits;
  loginLock: LoginLock;
  hashPool: HashPool;
  hasher: PasswordHasher;
  random: RandomReader;
  breachCheck: BreachCheck | null;
  background: BackgroundTasks;
  /** Session issuing and checking. */
  session: SessionDeps;
  cookie: SessionCookieSettings;
  /** Security notices (account locked, password changed, …) within RATE_LIMIT_SECURITY_NOTICE. */
  notices: LockNoticeDeps;
  /** Tells the email sender a transaction queued an email, so it goes at once. */
  emailQueued: () => void;
  /** Tokens and links in answers: NODE_ENV=development with a loopback BASE_URL only (config.ts). */
  devMode: boolean;
  secondFactor: SecondFactorParts;
  metrics: Metrics;
  /** Outbound calls to sign-in providers (GatehouseOptions.providerHTTP; tests point them at a fake). */
  providerHTTP: ProviderHTTPSettings | undefined;
}

/** What `buildSharedParts` opened, beside the parts: for the gatehouse's readiness, sweep and close. */
export interface Infrastructure {
  limiterBackend: LimiterBackend;
  /** GET /metrics' own limit, counted in this instance's memory. */
  scrapeLimits: RateLimits;
  refusals: RefusalCounter;
  emailPump: EmailPump;
  mailer: Mailer | null;
}

/**
 * Opens the database (migrating it when MIGRATE_ON_START says so) and the limiter store, then
 * builds every shared part on them. On a failure before the parts exist, the database is closed.
 */
export async function buildSharedParts(config: Readonly<Config>, options: GatehouseOptions): Promise<{ parts: SharedParts; infrastructure: Infrastructure }> {
  if (config.jwtSecret === null) {
    throw new ConfigError([
      'JWT_SECRET: required; set it to a random string of at least 32 characters, or outside production pass the configuration through withDevelopmentSecrets() to generate one in the data folder',
    ]);
  }
  const clock = options.clock ?? systemClock;
  const logger = options.logger ?? createLogger({ level: config.logLevel });
  const { database, limiterBackend } = await openStorage(config, options, logger);
  const hashPool = createHashPool();
  // Counted in plain numbers on the request path; prom-client loads on the first scrape (metrics/).
  const metrics = createMetrics({ token: config.metricsToken, db: database.kysely, hashPool: () => hashPool.load(), logger });
  const limits = createRateLimits(limiterBackend, config.rateLimits, { onRefused: metrics.recorder.rateLimitRefused });
  // Each instance renders its own metrics and Prometheus scrapes every instance: RATE_LIMIT_METRICS
  // counts in this instance's memory, so adding instances never makes a scraper's budget run out.
  const scrapeLimits = createRateLimits(memoryLimiterBackend(), config.rateLimits, { onRefused: metrics.recorder.rateLimitRefused });

  // Past a subject's first refusal in a window, refusals by a limit are counted, not written one
  // by one (audit/refusal-counter.ts). The metrics observer wraps it, so it still sees each one.
  const databaseStores = createStores(database.kysely, database.dialect);
  const refusals = createRefusalCounter(databaseStores.audit, { logger });
  // Sign-ins and locks are counted from the audit rows the flows write (metrics/audit-observer.ts).
  const stores = observeAuditEvents({ ...databaseStores, audit: refusals.audit }, metrics.recorder);
  const background = createBackgroundTasks(logger);
  const mailer = options.mailer !== undefined ? options.mailer : chooseMailer(config, logger);
  const emailPump = createEmailPump({
    outbox: stores.outbox,
    mailer,
    clock,
    logger,
    maxAttempts: config.mail.maxAttempts,
    afterPurge: () => database.scrubPurgedData(),
  });
  const random = options.random ?? secureRandom;
  const parts: SharedParts = {
    config,
    jwtSecret: config.jwtSecret,
    clock,
    logger,
    database,
    stores,
    adminStore: createAdminStore(database.kysely),
    consumedSignIns: createConsumedSignInStore(database.kysely),
    limits,
    loginLock: createLoginLock(limiterBackend, config.lockout),
    hashPool,
    hasher: options.hasher ?? createBcryptHasher({ rounds: config.bcryptRounds, pool: hashPool }),
    random,
    breachCheck:
      config.passwordBreachCheck.kind === 'hibp'
        ? createHibpBreachCheck({ rangeUrl: config.passwordBreachCheck.rangeUrl, logger, ...options.breachCheckHTTP })
        : null,
    background,
    session: {
      sessions: stores.sessions,
      transaction: stores.transaction,
      tokens: createSessionTokenCodec(config.jwtSecret),
      sessionExpiresInSeconds: config.sessionExpiresInSeconds,
      onSeen: createLastSeenRecorder(stores.sessions, background),
      idleTimeoutMs: config.sessionIdleTimeoutSeconds === null ? null : config.sessionIdleTimeoutSeconds * 1000,
    },
    // Secure by the address people use, not by NODE_ENV (config.ts, httpsBaseUrl).
    cookie: { name: config.sessionCookieName, secure: config.httpsBaseUrl },
    notices: {
      limits,
      logger,
      appName: config.mail.appName,
      defaultLanguage: config.defaultLanguage,
      emailTemplates: config.emailTemplates,
      baseUrl: config.baseUrl,
      maxFailures: config.lockout.maxFailures,
      lockedForMinutes: Math.ceil(config.lockout.durationSeconds / 60),
      lockedForSeconds: config.lockout.durationSeconds,
      onEmailQueued: emailPump.kick,
    },
    emailQueued: emailPump.kick,
    // Tokens in answers: development mode, and only with a loopback BASE_URL (config.ts, devConveniences).
    devMode: config.mode === 'development' && config.devConveniences,
    secondFactor: secondFactorParts(config, config.jwtSecret, random, metrics),
    metrics,
    providerHTTP: options.providerHTTP,
  };
  return { parts, infrastructure: { limiterBackend, scrapeLimits, refusals, emailPump, mailer } };
}

/** The database (migrated when MIGRATE_ON_START says so) and the limiter store; the database is closed again if the rest fails. */
async function openStorage(
  config: Readonly<Config>,
  options: Pick<GatehouseOptions, 'database'>,
  logger: Logger,
): Promise<{ database: DatabaseHandle; limiterBackend: LimiterBackend }> {
  const database = options.database ?? openDatabase(config.database, { queryTimeoutMs: config.databaseQueryTimeoutMs });
  try {
    if (config.migrateOnStart) await migrateToLatest(database);
    const limiterBackend = await openLimiterBackend({
      redisUrl: config.redisUrl,
      redisTimeoutMs: config.redisTimeoutMs,
      postgresPool: database.postgresPool,
      keyPrefix: config.redisKeyPrefix,
      logger,
    });
    return { database, limiterBackend };
  } catch (error) {
    await database.close();
    throw error;
  }
}

function secondFactorParts(config: Readonly<Config>, jwtSecret: string, random: RandomReader, metrics: Metrics): SecondFactorParts {
  const hooks: CodeStepHook[] = [];
  return {
    challenge: {
      key: createChallengeKey(jwtSecret),
      random,
      cookie: challengeCookieSettings(config.httpsBaseUrl),
      // A right first factor that needs a second one has no audit row of its own: counted here.
      onIssued: (firstMethod) => metrics.recorder.login('mfa_required', firstMethod),
    },
    onCodeStep: (hook) => void hooks.push(hook),
    async runCodeStepHooks(challenge, ctx) {
      for (const hook of hooks) await hook(challenge, ctx);
    },
  };
}
