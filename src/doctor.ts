/**
 * @module `gatehouse doctor`: looks at a production environment the way an operator would before
 * opening it to users, and says one line per finding with what to do. It reads the same
 * environment (and settings file) the server would, connects to what the server would connect
 * to, and changes nothing. A problem makes the command exit 1; a warning does not.
 */
import fs from 'node:fs';
import { ConfigError, loadConfig, type Config } from './config.js';
import { describeConnectionFailure, isConnectionCode, servicesOf, type ServiceAddress } from './connection-errors.js';
import { openDatabase, pendingMigrations } from './db/connect.js';
import { readDatabaseSettings, type DatabaseSettings } from './db/settings.js';
import { requireOptional } from './lazy-require.js';
import { createSmtpMailer } from './outbox/smtp-mailer.js';
import { filesOpenToOthers, octalMode, shellQuote, sqliteFiles } from './private-files.js';

type Env = Record<string, string | undefined>;

export interface Finding {
  level: 'ok' | 'warn' | 'problem';
  /** The variable or thing the finding is about: JWT_SECRET, DATABASE_URL, data folder. */
  subject: string;
  /** What was found, and for a warning or a problem, what to do. */
  message: string;
}

/** Past this, a service that has not answered counts as unreachable. */
const CHECK_TIMEOUT_MS = 5000;

const ok = (subject: string, message: string): Finding => ({ level: 'ok', subject, message });
const warn = (subject: string, message: string): Finding => ({ level: 'warn', subject, message });
const problem = (subject: string, message: string): Finding => ({ level: 'problem', subject, message });

/** The configuration's own refusals (each names its variable and the fix), then the mode. */
function configurationFindings(env: Env): { config: Readonly<Config> | null; findings: Finding[] } {
  const findings: Finding[] = [];
  let config: Readonly<Config> | null = null;
  try {
    config = loadConfig(env);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    for (const text of error.problems) findings.push(problem(/^([A-Z][A-Z0-9_]*)/.exec(text)?.[1] ?? 'configuration', text));
  }
  if (env.NODE_ENV?.trim() === 'production') findings.unshift(ok('NODE_ENV', 'production'));
  else findings.unshift(problem('NODE_ENV', 'not production: secrets are generated on disk and development conveniences may be on — set NODE_ENV=production'));
  return { config, findings };
}

/** Secrets set and long enough (loadConfig refuses the short ones), and the tokens that guard the operators' endpoints. */
function secretFindings(env: Env): Finding[] {
  const findings: Finding[] = [];
  const jwtSecret = env.JWT_SECRET ?? '';
  if (jwtSecret.length >= 32) findings.push(ok('JWT_SECRET', `set (${jwtSecret.length} characters)`));
  else if (jwtSecret === '') findings.push(problem('JWT_SECRET', 'not set — set it to a random string of at least 32 characters (openssl rand -base64 48)'));
  if ((env.ENCRYPTION_KEY_BASE64 ?? '') === '') {
    findings.push(
      warn(
        'ENCRYPTION_KEY_BASE64',
        'not set: two-factor secrets are sealed with a key generated in the data folder — set it (openssl rand -base64 32) and keep it with your backups',
      ),
    );
  } else findings.push(ok('ENCRYPTION_KEY_BASE64', 'set'));
  if ((env.METRICS_TOKEN ?? '') !== '') findings.push(ok('METRICS_TOKEN', 'set: /metrics needs it'));
  else if (env.METRICS_PUBLIC === 'true')
    findings.push(warn('METRICS_TOKEN', 'not set and METRICS_PUBLIC=true: /metrics is open — keep it off the public network at the proxy'));
  else findings.push(problem('METRICS_TOKEN', 'not set — set it (openssl rand -base64 32), or METRICS_PUBLIC=true to leave /metrics open on purpose'));
  if ((env.ADMIN_API_KEY ?? '') !== '') findings.push(ok('ADMIN_API_KEY', 'set: the admin API is on'));
  else
    findings.push(
      warn('ADMIN_API_KEY', 'not set: the admin API is off (the gatehouse users and audit commands still work) — set it (openssl rand -base64 32) to use it'),
    );
  return findings;
}

/** The public address, and the proxies in front. What arrives is not visible from here: the listening address says whether a proxy is likely. */
function addressFindings(config: Readonly<Config>): Finding[] {
  const findings: Finding[] = [];
  if (config.httpsBaseUrl) findings.push(ok('BASE_URL', `${config.baseUrl} (https: Secure __Host- cookies and HSTS)`));
  else findings.push(problem('BASE_URL', `${config.baseUrl} is not https: cookies are not Secure — set BASE_URL to the https:// address people use`));
  const loopback = config.host === '127.0.0.1' || config.host === '::1' || config.host === 'localhost';
  if (config.trustProxyHops === 0 && loopback) {
    findings.push(
      warn(
        'TRUST_PROXY',
        `0 while listening on ${config.host} only, as behind a reverse proxy: then every client counts as the proxy's address (one person's wrong passwords lock out everyone) — set TRUST_PROXY=1 for one proxy`,
      ),
    );
  } else if (config.trustProxyHops > 0 && !loopback) {
    findings.push(
      warn(
        'TRUST_PROXY',
        `${config.trustProxyHops} while listening on ${config.host}: a client that reaches Gatehouse directly can choose its address with X-Forwarded-For — set HOST=127.0.0.1, or let only the proxy reach this port`,
      ),
    );
  } else findings.push(ok('TRUST_PROXY', `${config.trustProxyHops} (HOST ${config.host})`));
  return findings;
}

/** Runs `check` with a bound; the milliseconds it took. */
async function timed(check: () => Promise<void>): Promise<number> {
  const started = performance.now();
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(Object.assign(new Error('no answer'), { code: 'ETIMEDOUT' })), CHECK_TIMEOUT_MS);
  });
  try {
    await Promise.race([check(), timeout]);
  } finally {
    clearTimeout(timer);
  }
  return Math.round(performance.now() - started);
}

/** A failed connection as one problem naming the variable; other errors with their message. */
function unreachable(target: ServiceAddress | undefined, variable: string, error: unknown): Finding {
  const { code, message } = error as { code?: string; message?: string };
  const inner = (error as { errors?: { code?: string }[] }).errors?.[0]?.code;
  // nodemailer reports a refused connection as ESOCKET or ECONNECTION, the system's code in its message.
  const wrapped = code === 'ESOCKET' || code === 'ECONNECTION' ? /\b(E[A-Z]{3,})\b/.exec(message ?? '')?.[1] : undefined;
  const systemCode = wrapped ?? code ?? inner;
  if (target !== undefined && systemCode !== undefined && isConnectionCode(systemCode)) return problem(variable, describeConnectionFailure(target, systemCode));
  const text = `${message ?? String(error)}${systemCode !== undefined ? ` (${systemCode})` : ''}`;
  if (/certificate/i.test(text)) {
    return problem(
      variable,
      `${text} — the certificate must verify for the host name in ${variable}: one from a public CA, or your CA's in NODE_EXTRA_CA_CERTS`,
    );
  }
  return problem(variable, text);
}

async function databaseFindings(config: Readonly<DatabaseSettings>, env: Env): Promise<Finding[]> {
  const target = servicesOf(env).find((service) => service.variable === 'DATABASE_URL');
  const where = config.database.kind === 'postgres' ? `PostgreSQL at ${target?.host}:${target?.port}` : `SQLite ${config.database.filename}`;
  const findings: Finding[] = [];
  if (config.database.kind === 'sqlite' && !fs.existsSync(config.database.filename)) {
    return [problem('DATABASE_URL', `${where} does not exist yet — run gatehouse migrate (or start the server once) to create it`)];
  }
  const database = openDatabase(config.database, { queryTimeoutMs: Math.min(config.databaseQueryTimeoutMs, CHECK_TIMEOUT_MS) });
  try {
    const ms = await timed(() => database.ping());
    findings.push(ok('DATABASE_URL', `${where} answered in ${ms} ms`));
    const pending = await pendingMigrations(database);
    if (pending.length === 0) findings.push(ok('migrations', 'the database is up to date'));
    else if (config.migrateOnStart)
      findings.push(warn('migrations', `${pending.length} to apply (${pending.join(', ')}): the server applies them at start (MIGRATE_ON_START=true)`));
    else findings.push(problem('migrations', `${pending.length} to apply (${pending.join(', ')}) and MIGRATE_ON_START=false — run gatehouse migrate`));
  } catch (error) {
    findings.push(unreachable(target, 'DATABASE_URL', error));
  } finally {
    await database.close().catch(() => {});
  }
  return findings;
}

/** Where the rate limits and locks count, and whether that store answers. */
async function limitStoreFindings(config: Readonly<Pick<Config, 'redisUrl' | 'redisKeyPrefix' | 'database'>>, env: Env): Promise<Finding[]> {
  if (config.redisUrl === null) {
    if (config.database.kind === 'postgres') return [ok('REDIS_URL', 'not set: rate limits and locks count in PostgreSQL, shared by every instance')];
    return [
      warn(
        'REDIS_URL',
        "not set: rate limits and locks count in this process's memory, each instance apart and forgotten at restart — set REDIS_URL when you run more than one",
      ),
    ];
  }
  const target = servicesOf(env).find((service) => service.variable === 'REDIS_URL');
  const { Redis } = requireOptional('ioredis') as typeof import('ioredis');
  const redis = new Redis(config.redisUrl, {
    lazyConnect: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
    connectTimeout: CHECK_TIMEOUT_MS,
  });
  // connect() fails with "Connection is closed."; the 'error' event carries the system's code.
  let connectionError: unknown;
  redis.on('error', (error) => {
    connectionError ??= error;
  });
  try {
    const ms = await timed(async () => {
      await redis.connect();
      await redis.ping();
    });
    return [ok('REDIS_URL', `Redis at ${target?.host}:${target?.port} answered in ${ms} ms (keys under ${config.redisKeyPrefix}:)`)];
  } catch (error) {
    return [unreachable(target, 'REDIS_URL', connectionError ?? error)];
  } finally {
    redis.disconnect();
  }
}

/** The mail server: connected, upgraded to TLS as SMTP_TLS requires, signed in. */
async function mailFindings(config: Readonly<Config>, env: Env): Promise<Finding[]> {
  if (config.mail.smtpUrl === null)
    return [problem('SMTP_URL', 'not set: no email is sent (verification, reset and sign-in links stay queued) — set SMTP_URL=smtp://user:password@host:587')];
  const target = servicesOf(env).find((service) => service.variable === 'SMTP_URL');
  const mailer = createSmtpMailer({ url: config.mail.smtpUrl, from: config.mail.from, tls: config.mail.smtpTls });
  try {
    const ms = await timed(() => mailer.verify());
    const tls = config.mail.smtpUrl.startsWith('smtps:') ? 'TLS' : config.mail.smtpTls === 'required' ? 'STARTTLS' : 'no TLS (SMTP_TLS=off)';
    const finding = `${target?.host}:${target?.port} accepted the connection with ${tls} in ${ms} ms`;
    return [config.mail.smtpTls === 'off' ? warn('SMTP_URL', `${finding}: links travel in clear — keep the relay on this machine`) : ok('SMTP_URL', finding)];
  } catch (error) {
    return [unreachable(target, 'SMTP_URL', error)];
  } finally {
    await mailer.close?.();
  }
}

/** The data folder holds the SQLite database and generated secrets: only Gatehouse's user may read it. */
function dataFolderFindings(config: Readonly<Config>): Finding[] {
  if (!fs.existsSync(config.dataDir)) return [ok('data folder', `${config.dataDir} does not exist (nothing kept on disk)`)];
  const mode = fs.statSync(config.dataDir).mode & 0o777;
  const findings: Finding[] = [];
  if ((mode & 0o077) !== 0) {
    findings.push(
      problem('data folder', `${config.dataDir} is mode ${octalMode(mode)}: other users may look inside — chmod 700 ${shellQuote(config.dataDir)}`),
    );
  } else findings.push(ok('data folder', `${config.dataDir} is mode ${octalMode(mode)}`));
  const files = fs.readdirSync(config.dataDir).map((name) => `${config.dataDir}/${name}`);
  if (config.database.kind === 'sqlite' && config.database.filename !== ':memory:') files.push(...sqliteFiles(config.database.filename));
  const open = filesOpenToOthers([...new Set(files)].filter((file) => fs.existsSync(file) && fs.statSync(file).isFile()));
  if (open.length > 0) {
    findings.push(
      problem(
        'data folder',
        `open to other users: ${open.map((entry) => `${entry.file} (${octalMode(entry.mode)})`).join(', ')} — chmod 600 ${open.map((entry) => shellQuote(entry.file)).join(' ')}`,
      ),
    );
  }
  return findings;
}

/** Every finding, in the order an operator would fix them. */
export async function diagnose(env: Env): Promise<Finding[]> {
  const { config, findings } = configurationFindings(env);
  // A secret the configuration already refused is said once.
  const refused = new Set(findings.filter((finding) => finding.level === 'problem').map((finding) => finding.subject));
  findings.push(...secretFindings(env).filter((finding) => !refused.has(finding.subject)));
  // A wrong setting elsewhere does not hide whether the database answers.
  if (config === null) {
    const database = readDatabaseSettings(env);
    if (database.problems.length > 0) return findings;
    findings.push(...(await databaseFindings(database.settings, env)));
    const redisUrl = env.REDIS_URL?.trim() ? env.REDIS_URL : null;
    findings.push(...(await limitStoreFindings({ redisUrl, redisKeyPrefix: env.REDIS_KEY_PREFIX ?? 'gatehouse', database: database.settings.database }, env)));
    return findings;
  }
  findings.push(...addressFindings(config));
  findings.push(...(await databaseFindings(config, env)));
  findings.push(...(await limitStoreFindings(config, env)));
  findings.push(...(await mailFindings(config, env)));
  findings.push(...dataFolderFindings(config));
  return findings;
}

const LABELS: Record<Finding['level'], string> = { ok: 'ok     ', warn: 'warning', problem: 'PROBLEM' };

/** One line per finding, then the count; `problems` > 0 means exit 1. */
export function formatFindings(findings: readonly Finding[]): { text: string; problems: number } {
  const problems = findings.filter((finding) => finding.level === 'problem').length;
  const warnings = findings.filter((finding) => finding.level === 'warn').length;
  // The configuration's own messages already start with their variable's name.
  const lines = findings.map(
    (finding) => `${LABELS[finding.level]}  ${finding.message.startsWith(`${finding.subject}:`) ? finding.message : `${finding.subject}: ${finding.message}`}`,
  );
  const verdict = problems > 0 ? 'not ready for production' : 'ready for production';
  lines.push('', `${problems} problem${problems === 1 ? '' : 's'}, ${warnings} warning${warnings === 1 ? '' : 's'}: ${verdict}`);
  return { text: lines.join('\n'), problems };
}
