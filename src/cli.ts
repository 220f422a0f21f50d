#!/usr/bin/env node
/**
 * @module The `gatehouse` command: `serve` (default) runs the server, `migrate` applies the
 * database migrations, `mail` and `outbox` send and list emails, `users` and `audit` are the
 * operators' tools (src/admin/cli.ts). Configuration comes from the environment, and from `./.env` or the file
 * ENV_FILE names (src/env-file.ts, docs/configuration.md).
 */
import { UsageError } from './admin/cli.js';
import { CAPABILITIES } from './capabilities.js';
import { startBanner } from './banner.js';
import { systemClock } from './clock.js';
import { ConfigError, loadConfig, type Config } from './config.js';
import { explainStartError } from './connection-errors.js';
import { readDatabaseSettings, type DatabaseSettings } from './db/settings.js';
import { diagnose, formatFindings } from './doctor.js';
import { migrateToLatest, openDatabase } from './db/connect.js';
import { createStores } from './db/stores.js';
import { BackupRefused, backupDatabase } from './backup.js';
import { AppError } from './errors.js';
import { mailPreview } from './outbox/preview.js';
import { createSmtpMailer } from './outbox/smtp-mailer.js';
import { formatOutboxTable, runMailWorker } from './outbox/worker.js';
import { withPersistedDevEncryptionKey, withPersistedDevSecret } from './dev-secret.js';
import { describeEnvFile, readEnvFile, type EnvFileOutcome } from './env-file.js';
import { START_DETAILS_KEY, chooseLogFormat, createCliLogger, type Logger } from './logger.js';
import { filesOpenToOthers, octalMode, shellQuote, sqliteFiles } from './private-files.js';
import { startServer } from './server.js';

/** The commands capabilities bring (the operators' `users` and `audit`: src/admin/commands.ts). */
const CAPABILITY_COMMANDS = new Map(CAPABILITIES.flatMap((capability) => capability.commands ?? []).map((command) => [command.name, command]));

const CORE_COMMANDS = ['serve', 'migrate', 'doctor', 'backup', 'mail', 'outbox'] as const;
const COMMANDS: readonly string[] = [...CORE_COMMANDS, ...CAPABILITY_COMMANDS.keys()];

const USAGE = [
  `Usage: gatehouse [${COMMANDS.join('|')}]`,
  '  serve          run the server (default); configuration from the environment, see docs/configuration.md',
  '  migrate        apply pending database migrations and exit (needs only DATABASE_URL)',
  '  doctor         check this environment for production: one line per finding with its fix; exit 1 on a problem',
  '  backup FILE    copy the SQLite database into FILE while the server runs (SQLite online backup; needs only DATABASE_URL)',
  '  mail [--once]  send queued emails over SMTP_URL until stopped (--once: send what is due, then exit)',
  '  mail preview <kind> [--lang L] [--html] | --list  print one email with sample values, overrides applied (no SMTP, no database)',
  '  outbox [--limit N]  list queued, sent and dead emails (never their links)',
  ...[...CAPABILITY_COMMANDS.values()].map((command) => `  ${command.summary}`),
].join('\n');

/** Pretty lines for a person at a terminal, JSON for everything else, unless LOG_FORMAT says which. */
function cliLogger(config: Readonly<Config>, envFile: EnvFileOutcome): Logger {
  const logger = createCliLogger({ level: config.logLevel, format: chooseLogFormat(config.logFormat, process.stdout.isTTY === true) });
  const line = describeEnvFile(envFile);
  if (line !== null) logger.info({ [START_DETAILS_KEY]: line.details }, line.message);
  return logger;
}

/**
 * Warns when the SQLite database (or its WAL or shared-memory file) is open to other users. A
 * database Gatehouse creates is 0600; an older one, or one made by other means, keeps the mode
 * its owner gave it: Gatehouse says how to fix it rather than changing it behind their back.
 */
function warnIfDatabaseIsShared(config: Readonly<Config>, logger: Logger): void {
  if (config.database.kind !== 'sqlite' || config.database.filename === ':memory:') return;
  const open = filesOpenToOthers(sqliteFiles(config.database.filename));
  if (open.length === 0) return;
  const command = `chmod 600 ${open.map((entry) => shellQuote(entry.file)).join(' ')}`;
  const files = open.map((entry) => `${entry.file} (mode ${octalMode(entry.mode)})`).join(', ');
  logger.warn(
    { files: open.map((entry) => entry.file), fix: command },
    `Other users on this machine can read or write the database: ${files}. It holds emails, password hashes and the audit trail. To fix: ${command}`,
  );
}

async function serveCommand(config: Readonly<Config>, envFile: EnvFileOutcome): Promise<void> {
  const logger = cliLogger(config, envFile);
  const started = Date.now();
  const running = await startServer(withPersistedDevEncryptionKey(withPersistedDevSecret(config, logger), logger), { logger });
  const shutdown = (signal: string): void => {
    logger.info({ signal }, 'shutting down: finishing in-flight requests');
    running.stop().then(
      () => {
        logger.info('stopped');
        process.exit(0);
      },
      () => process.exit(1),
    );
  };
  // Before the banner: whoever reads "listening on" may stop the server at once, and a signal
  // without its handler would kill the process instead of draining it.
  process.once('SIGTERM', () => shutdown('SIGTERM'));
  process.once('SIGINT', () => shutdown('SIGINT'));
  warnIfDatabaseIsShared(config, logger);
  // The running configuration: with PORT=0 and no BASE_URL, it names the port actually bound.
  // Then the capabilities' lines read from the database (webhook endpoints): a failure there costs
  // those lines, not the start.
  const capabilityLines = await running.gatehouse.startLines().catch((error: unknown) => {
    logger.warn({ err: error }, 'could not read the start banner lines of the capabilities (webhook endpoints)');
    return [];
  });
  for (const line of [...startBanner(running.gatehouse.config, running.url, Date.now() - started), ...capabilityLines]) {
    logger[line.level]({ [START_DETAILS_KEY]: line.details }, line.message);
  }
}

/** DATABASE_URL and its companions only: see readDatabaseSettings. */
function loadDatabaseSettings(env: NodeJS.ProcessEnv): DatabaseSettings {
  const { settings, problems } = readDatabaseSettings(env);
  if (problems.length > 0) throw new ConfigError(problems);
  return settings;
}

async function migrateCommand(config: Readonly<DatabaseSettings>): Promise<void> {
  const database = openDatabase(config.database, { queryTimeoutMs: config.databaseQueryTimeoutMs });
  try {
    const { results = [] } = await migrateToLatest(database);
    if (results.length === 0) console.log('Database is up to date.');
    for (const result of results) console.log(`${result.status === 'Success' ? 'applied' : result.status}: ${result.migrationName}`);
  } finally {
    await database.close();
  }
}

async function backupCommand(config: Readonly<DatabaseSettings>, file: string | undefined): Promise<void> {
  if (file === undefined || file.startsWith('-'))
    throw new UsageError('backup: name the file to write, e.g. gatehouse backup backups/gatehouse-2026-11-27.db', USAGE);
  try {
    const { pages } = await backupDatabase(config.database, file);
    console.log(`Backed up ${pages} pages to ${file} (readable by this user only).`);
  } catch (error) {
    if (!(error instanceof BackupRefused)) throw error;
    console.error(error.message);
    process.exitCode = 1;
  }
}

/** Every finding on stdout; exit 1 when one is a problem. Configuration errors are findings here, not a refusal to run. */
async function doctorCommand(envFile: EnvFileOutcome): Promise<void> {
  const line = describeEnvFile(envFile);
  if (line !== null) console.log(line.message);
  const { text, problems } = formatFindings(await diagnose(process.env));
  console.log(text);
  if (problems > 0) process.exitCode = 1;
}

async function mailCommand(config: Readonly<Config>, envFile: EnvFileOutcome, once: boolean): Promise<void> {
  if (config.mail.smtpUrl === null) {
    throw new ConfigError(['SMTP_URL: required for gatehouse mail; set it to smtp://user:password@host:587']);
  }
  const logger = cliLogger(config, envFile);
  const database = openDatabase(config.database, { queryTimeoutMs: config.databaseQueryTimeoutMs });
  const mailer = createSmtpMailer({ url: config.mail.smtpUrl, from: config.mail.from, tls: config.mail.smtpTls });
  const stop = new AbortController();
  process.once('SIGTERM', () => stop.abort());
  process.once('SIGINT', () => stop.abort());
  try {
    if (config.migrateOnStart) await migrateToLatest(database);
    const stores = createStores(database.kysely, database.dialect);
    logger.info({ once }, 'mail worker started');
    await runMailWorker(
      { outbox: stores.outbox, mailer, clock: systemClock, logger, maxAttempts: config.mail.maxAttempts, afterPurge: () => database.scrubPurgedData() },
      { once, signal: stop.signal },
    );
  } finally {
    await mailer.close?.();
    await database.close();
  }
}

async function outboxCommand(config: Readonly<Config>, limit: number): Promise<void> {
  const database = openDatabase(config.database, { queryTimeoutMs: config.databaseQueryTimeoutMs });
  try {
    const stores = createStores(database.kysely, database.dialect);
    const emails = await stores.outbox.listEmails(limit);
    console.log(emails.length === 0 ? 'The outbox is empty.' : formatOutboxTable(emails));
  } finally {
    await database.close();
  }
}

async function main(argv: string[]): Promise<void> {
  const command = argv[0] ?? 'serve';
  if (command === '--help' || command === '-h' || command === 'help') {
    console.log(USAGE);
    return;
  }
  if (!COMMANDS.includes(command)) {
    console.error(`Unknown command "${command}".\n${USAGE}`);
    process.exitCode = 2;
    return;
  }
  // Before loadConfig, which then sees the file's values as if they had been exported; the
  // variables already set keep theirs (process.loadEnvFile never overrides one).
  const envFile = readEnvFile(process.env, process.cwd(), (file) => process.loadEnvFile(file));
  envFileRead = envFile;
  if (command === 'migrate') return migrateCommand(loadDatabaseSettings(process.env));
  if (command === 'doctor') return doctorCommand(envFile);
  if (command === 'backup') return backupCommand(loadDatabaseSettings(process.env), argv[1]);
  const config = loadConfig(process.env);
  const capabilityCommand = CAPABILITY_COMMANDS.get(command);
  if (capabilityCommand !== undefined) await capabilityCommand.run(config, argv.slice(1));
  else if (command === 'mail' && argv[1] === 'preview') process.stdout.write(mailPreview(config, argv.slice(2)));
  else if (command === 'mail') await mailCommand(config, envFile, argv.includes('--once'));
  else if (command === 'outbox') {
    const limitAt = argv.indexOf('--limit');
    const limit = limitAt >= 0 ? Number(argv[limitAt + 1]) : 50;
    if (!Number.isInteger(limit) || limit < 1) throw new ConfigError(['--limit: expected a whole number of at least 1']);
    await outboxCommand(config, limit);
  } else await serveCommand(config, envFile);
}

/** The settings file read at start, so that a bad value it gave is reported with its file. */
let envFileRead: EnvFileOutcome = { kind: 'none' };

/** A problem about a variable the settings file gave, followed by that file's name (the environment holds no trace of where a value came from). */
function withSourceFile(problem: string): string {
  if (envFileRead.kind !== 'read') return problem;
  const name = /^([A-Z][A-Z0-9_]*)\b/.exec(problem)?.[1];
  return name !== undefined && envFileRead.set.includes(name) ? `${problem} (${name} is set in ${envFileRead.file})` : problem;
}

main(process.argv.slice(2)).catch((error: unknown) => {
  // Bad arguments: what is wrong and the usage, exit 2; an unknown user (404) and other refusals: the message, exit 1.
  if (error instanceof UsageError) {
    console.error(`${error.message}\n${error.usage}`);
    process.exit(2);
  }
  if (error instanceof AppError) {
    console.error(error.message);
    process.exit(1);
  }
  const explained = explainStartError(error, process.env);
  if (error instanceof ConfigError) {
    console.error(`Gatehouse cannot start.\n${new ConfigError(error.problems.map(withSourceFile)).message}`);
  } else if (explained !== null) {
    console.error(`Gatehouse cannot start.\n${explained}`);
  } else {
    const { code, message } = error as { code?: string; message?: string };
    console.error(`Gatehouse cannot start: ${message ?? String(error)}${code ? ` (${code})` : ''}`);
  }
  process.exit(1);
});
