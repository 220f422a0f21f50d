/**
 * @module What `gatehouse serve` says once it listens: where it listens, where to open it, the
 * mode, the database and the data folder, and, for each optional capability, whether it is on
 * and which variables turn it on. A pure function of the configuration, so each line is tested
 * without a server; the command line logs the lines. Nothing secret reaches a line: no secret
 * variable is read here, and the database and SMTP addresses lose their user, password and query.
 */
import path from 'node:path';
import type { Config } from './config.js';
import { GITHUB_SIGN_IN_VARIABLES } from './oauth/settings.js';
import { passkeyAddressProblem } from './passkeys/relying-party.js';

export interface BannerLine {
  level: 'info' | 'warn';
  message: string;
  /** The same facts as fields, for JSON readers. */
  details: Record<string, string | number | readonly string[]>;
}

/** `postgres://user:secret@db.internal:5432/auth?sslmode=require` → `db.internal:5432/auth`; null when unparseable. */
export function describeServerAddress(url: string): string | null {
  try {
    const parsed = new URL(url);
    // Only the host, port and database name: user info and query parameters (password=,
    // sslpassword=, sslkey=) may hold credentials.
    return parsed.host === '' ? null : `${parsed.host}${parsed.pathname === '/' ? '' : parsed.pathname}`;
  } catch {
    return null;
  }
}

function databaseLine(config: Readonly<Config>): BannerLine {
  const target = config.database;
  const details = { database: target.kind, dataDir: config.dataDir };
  if (target.kind === 'postgres') {
    const server = describeServerAddress(target.connectionString);
    return {
      level: 'info',
      message: `Database: PostgreSQL${server === null ? '' : ` at ${server}`}. Data folder: ${config.dataDir}`,
      details: server === null ? details : { ...details, server },
    };
  }
  if (target.filename === ':memory:') {
    return { level: 'info', message: `Database: SQLite in memory, gone when the server stops. Data folder: ${config.dataDir}`, details };
  }
  // loadConfig made the data folder the SQLite file's folder.
  const file = path.join(config.dataDir, path.basename(target.filename));
  return { level: 'info', message: `Database: SQLite file ${file}. Data folder: ${config.dataDir}`, details: { ...details, file } };
}

function githubLine(config: Readonly<Config>): BannerLine {
  const variables = GITHUB_SIGN_IN_VARIABLES;
  if (config.oauthProblems.length === 0) {
    const callback = `${config.baseUrl}/api/auth/callback/github`;
    return {
      level: 'info',
      message: `Sign in with GitHub is on (the GitHub OAuth app's callback URL must be ${callback})`,
      details: { capability: 'github', state: 'on', callback },
    };
  }
  // AUTH_SECRET and ENCRYPTION_KEY_BASE64 serve other capabilities too (two-factor, other
  // providers): only a GitHub variable of its own says someone meant to turn GitHub on.
  const githubMeant = !config.oauthUnset.includes('GITHUB_CLIENT_ID') || !config.oauthUnset.includes('GITHUB_CLIENT_SECRET');
  if (!githubMeant) {
    return {
      level: 'info',
      message: `Sign in with GitHub is off: set ${variables.join(', ')} to turn it on`,
      details: { capability: 'github', state: 'off', variables },
    };
  }
  // Some of its variables are set: someone meant to turn it on, so say what is still wrong.
  return {
    level: 'warn',
    message: `Sign in with GitHub is off: ${config.oauthProblems.join('; ')}`,
    details: { capability: 'github', state: 'off', variables, problems: config.oauthProblems },
  };
}

/** One line per OIDC_PROVIDERS id: on with its callback, or off naming what is missing. */
function oidcLines(config: Readonly<Config>): BannerLine[] {
  return config.oidcProviders.map((provider): BannerLine => {
    const callback = `${config.baseUrl}/api/auth/callback/${provider.id}`;
    if (provider.problems.length === 0) {
      return {
        level: 'info',
        message: `Sign in with ${provider.name} is on (OpenID Connect; its client's redirect URI must be ${callback})`,
        details: { capability: `oidc:${provider.id}`, state: 'on', callback },
      };
    }
    return {
      level: 'warn',
      message: `Sign in with ${provider.name} is off: ${provider.problems.join('; ')}`,
      details: { capability: `oidc:${provider.id}`, state: 'off', problems: provider.problems },
    };
  });
}

/**
 * Two-factor sign-in needs a key for its secrets: ENCRYPTION_KEY_BASE64, or outside production the
 * generated one (whose warning, dev-secret.ts, already says so). Null when it is on.
 */
function twoFactorLine(config: Readonly<Config>): BannerLine | null {
  if (config.encryptionKeys.length > 0 || config.generatedEncryptionKey !== null) return null;
  return {
    level: 'info',
    message: 'Two-factor sign-in is off: set ENCRYPTION_KEY_BASE64 (openssl rand -base64 32) to turn it on',
    details: { capability: 'two-factor', state: 'off', variables: ['ENCRYPTION_KEY_BASE64'] },
  };
}

/**
 * Null when another line already says it: in production without SMTP_URL, createGatehouse warns
 * that emails stay queued. Outside production they are printed only with a loopback BASE_URL
 * (config.ts, devConveniences): with another one the line says they stay queued, and why.
 */
function emailLine(config: Readonly<Config>): BannerLine | null {
  const { smtpUrl, delivery } = config.mail;
  if (smtpUrl !== null) {
    const server = describeServerAddress(smtpUrl) ?? 'SMTP_URL';
    const by = delivery === 'worker' ? 'by `gatehouse mail` workers (MAIL_DELIVERY=worker); this server only queues them' : 'by this server';
    return { level: 'info', message: `Email delivery is on: over SMTP to ${server}, ${by}`, details: { capability: 'email', state: 'on', server, delivery } };
  }
  if (config.mode === 'production') return null;
  if (!config.devConveniences) {
    return {
      level: 'warn',
      message: `Email delivery is off: emails stay queued and are not printed to this console, because BASE_URL (${config.baseUrl}) is not localhost, 127.0.0.1 or [::1]; set SMTP_URL to send them`,
      details: { capability: 'email', state: 'queued', baseUrl: config.baseUrl, variables: ['SMTP_URL'] },
    };
  }
  return {
    level: 'info',
    message: 'Email delivery is off: emails are printed to this console instead; set SMTP_URL to send them',
    details: { capability: 'email', state: 'off', variables: ['SMTP_URL'] },
  };
}

/** Passkeys need a secure context and a domain name (passkeys/relying-party.ts): a warning when BASE_URL gives neither. */
function passkeyLine(config: Readonly<Config>): BannerLine | null {
  const problem = passkeyAddressProblem(config.baseUrl);
  if (problem === null) return null;
  return {
    level: 'warn',
    message: `Passkeys will not work: ${problem}`,
    details: { capability: 'passkeys', state: 'unusable', baseUrl: config.baseUrl },
  };
}

/**
 * In production, an open GET /metrics is worth a warning: it tells anyone how the service is doing.
 * It is open there only by METRICS_PUBLIC=true (loadConfig refuses it otherwise).
 */
function metricsLine(config: Readonly<Config>): BannerLine | null {
  if (config.mode !== 'production' || config.metricsToken !== null) return null;
  return {
    level: 'warn',
    message: 'GET /metrics is open to anyone who can reach this server (METRICS_PUBLIC=true): keep /metrics off the public network, or set METRICS_TOKEN',
    details: { capability: 'metrics', state: 'open', variables: ['METRICS_TOKEN', 'METRICS_PUBLIC'] },
  };
}

/**
 * Where rate limits and login locks count: an operator behind a load balancer must know whether
 * the instances share them. The Redis address without its password, its database and key prefix.
 */
function limitsLine(config: Readonly<Config>): BannerLine {
  if (config.redisUrl !== null) {
    const url = new URL(config.redisUrl);
    const server = url.host;
    const db = /^\/(\d+)$/.exec(url.pathname)?.[1] ?? url.searchParams.get('db') ?? '0';
    return {
      level: 'info',
      message: `Limits and locks count in Redis at ${server}, database ${db}, keys under ${config.redisKeyPrefix}: (shared by every instance using it)`,
      details: { limits: 'redis', server, db: Number(db), prefix: config.redisKeyPrefix },
    };
  }
  if (config.database.kind === 'postgres') {
    return { level: 'info', message: 'Limits and locks count in PostgreSQL (shared by every instance on this database)', details: { limits: 'postgres' } };
  }
  return {
    level: 'info',
    message: "Limits and locks count in this process's memory: each instance counts its own and a restart forgets them; set REDIS_URL to share them",
    details: { limits: 'memory', variables: ['REDIS_URL'] },
  };
}

/**
 * The start banner, in order. `listeningUrl` is the bound address (what a local client connects
 * to; the "listening on" line is what bench/lib.mjs and the tests wait for), while BASE_URL is
 * the address to open: the only origin whose pages may sign in (docs/http-api.md).
 */
export function startBanner(config: Readonly<Config>, listeningUrl: string, startupMs: number): BannerLine[] {
  const base = config.baseUrl;
  const lines: BannerLine[] = [
    {
      level: 'info',
      // The URL is followed by a space: pino-pretty colours the message, and the pattern the
      // tests and the bench use, /listening on (http:\/\/[^\s"]+)/, must not take the colour code.
      message: `Gatehouse listening on ${listeningUrl} (mode: ${config.mode}, database: ${config.database.kind})`,
      details: { url: listeningUrl, baseUrl: base, mode: config.mode, database: config.database.kind, startupMs },
    },
    {
      level: 'info',
      message: `Open ${base} in a browser: ${base}/register to create an account, ${base}/login to sign in`,
      details: { baseUrl: base, register: `${base}/register`, login: `${base}/login` },
    },
    databaseLine(config),
    limitsLine(config),
    githubLine(config),
    ...oidcLines(config),
  ];
  const twoFactor = twoFactorLine(config);
  if (twoFactor !== null) lines.push(twoFactor);
  const email = emailLine(config);
  if (email !== null) lines.push(email);
  const passkeys = passkeyLine(config);
  if (passkeys !== null) lines.push(passkeys);
  const metrics = metricsLine(config);
  if (metrics !== null) lines.push(metrics);
  return lines;
}
