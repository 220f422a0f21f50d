/**
 * @module The library face: createGatehouse(config) wires configuration, database, stores and
 * flows into one Web-standard fetch handler. The Node server is a thin shell around it.
 */
import type { Hono } from 'hono';
import { parse as parseCookies } from 'hono/utils/cookie';
import { createApp } from './app.js';
import { systemClock, type Clock } from './clock.js';
import { ConfigError, type Config } from './config.js';
import { migrateToLatest, openDatabase, type DatabaseHandle } from './db/connect.js';
import { createStores, type Stores } from './db/stores.js';
import type { ConnectionInfo } from './http/env.js';
import { createLogger, type Logger } from './logger.js';
import { BUILT_IN_PROVIDERS, createOAuthSetup, type ProviderHTTPSettings } from './oauth/setup.js';
import { createBcryptHasher, type PasswordHasher } from './password/hasher.js';
import { secureRandom } from './random.js';
import { validateSessionToken } from './session/flow.js';
import { createSessionKey } from './session/token.js';
import { toPublicUser, type PublicUser } from './users/user.js';

export interface GatehouseOptions {
  clock?: Clock;
  logger?: Logger;
  hasher?: PasswordHasher;
  /** An already open database (tests pass one bound to a throwaway PostgreSQL schema). */
  database?: DatabaseHandle;
  /** Outbound calls to sign-in providers: fetch and time bound (tests point them at a local fake). */
  providerHTTP?: ProviderHTTPSettings;
}

export interface GatehouseSession {
  user: PublicUser;
  session: { id: string; expires: string };
}

export interface Gatehouse {
  readonly config: Readonly<Config>;
  /** Storage verbs, for operators' tooling and tests; the HTTP API never needs them. */
  readonly stores: Stores;
  /** Answers any Gatehouse request; `info.remoteAddress` is the client's socket address. */
  fetch(request: Request, info?: ConnectionInfo): Promise<Response>;
  /** Reads and validates the session cookie of `request`; null when there is no valid session. */
  getSession(request: Request): Promise<GatehouseSession | null>;
  /** Closes the database. In-flight requests should be finished first. */
  close(): Promise<void>;
}

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
  const database = options.database ?? openDatabase(config.database);
  try {
    if (config.migrateOnStart) await migrateToLatest(database);
  } catch (error) {
    await database.close();
    throw error;
  }

  const stores = createStores(database.kysely);
  const cookie = { name: config.sessionCookieName, secure: config.mode === 'production' };
  const session = {
    sessions: stores.sessions,
    sessionKey: createSessionKey(config.jwtSecret),
    sessionExpiresInSeconds: config.sessionExpiresInSeconds,
  };
  const hasher = options.hasher ?? createBcryptHasher({ rounds: config.bcryptRounds });

  const app: Hono<never> = createApp({
    config,
    clock,
    logger,
    database,
    cookie,
    session,
    password: { users: stores.users, audit: stores.audit, hasher, session },
    oauth: {
      knownProviders: BUILT_IN_PROVIDERS,
      setup: createOAuthSetup(config, options.providerHTTP),
      problems: config.oauthProblems,
      baseUrl: config.baseUrl,
      defaultReturnTo: config.defaultReturnTo,
      random: secureRandom,
      stores,
      session,
    },
  }) as unknown as Hono<never>;

  return {
    config,
    stores,
    fetch: async (request, info = {}) => app.fetch(request, info),
    async getSession(request) {
      const header = request.headers.get('cookie');
      const value = header ? parseCookies(header, cookie.name)[cookie.name] : undefined;
      if (value === undefined) return null;
      const valid = await validateSessionToken(session, value, clock.now());
      if (valid === null) return null;
      return {
        user: toPublicUser(valid.user),
        session: { id: valid.session.id, expires: valid.session.expiresAt.toISOString() },
      };
    },
    close: () => database.close(),
  };
}
