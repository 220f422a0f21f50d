#!/usr/bin/env node
/**
 * @module The `gatehouse` command: `serve` (default) runs the server, `migrate` applies the
 * database migrations. Configuration comes from the environment (docs/configuration.md).
 */
import { systemClock } from './clock.js';
import { ConfigError, loadConfig, type Config } from './config.js';
import { migrateToLatest, openDatabase } from './db/connect.js';
import { createStores } from './db/stores.js';
import { createSmtpMailer } from './outbox/smtp-mailer.js';
import { formatOutboxTable, runMailWorker } from './outbox/worker.js';
import { withPersistedDevSecret } from './dev-secret.js';
import { createLogger } from './logger.js';
import { startServer } from './server.js';

const USAGE = `Usage: gatehouse [serve|migrate|mail|outbox]
  serve          run the server (default); configuration from the environment, see docs/configuration.md
  migrate        apply pending database migrations and exit
  mail [--once]  send queued emails over SMTP_URL until stopped (--once: send what is due, then exit)
  outbox [--limit N]  list queued, sent and dead emails (never their links)`;

const COMMANDS = ['serve', 'migrate', 'mail', 'outbox'] as const;

async function serveCommand(config: Readonly<Config>): Promise<void> {
  const logger = createLogger({ level: config.logLevel });
  const started = Date.now();
  const running = await startServer(withPersistedDevSecret(config, logger), { logger });
  for (const problem of config.oauthProblems) logger.warn(`Sign in with GitHub is disabled: ${problem}`);
  logger.info(
    { url: running.url, mode: config.mode, database: config.database.kind, startupMs: Date.now() - started },
    `Gatehouse listening on ${running.url} (mode: ${config.mode}, database: ${config.database.kind})`,
  );
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
  process.once('SIGTERM', () => shutdown('SIGTERM'));
  process.once('SIGINT', () => shutdown('SIGINT'));
}

async function migrateCommand(config: Readonly<Config>): Promise<void> {
  const database = openDatabase(config.database);
  try {
    const { results = [] } = await migrateToLatest(database);
    if (results.length === 0) console.log('Database is up to date.');
    for (const result of results) console.log(`${result.status === 'Success' ? 'applied' : result.status}: ${result.migrationName}`);
  } finally {
    await database.close();
  }
}

async function mailCommand(config: Readonly<Config>, once: boolean): Promise<void> {
  if (config.mail.smtpUrl === null) {
    throw new ConfigError(['SMTP_URL: required for gatehouse mail; set it to smtp://user:password@host:587']);
  }
  const logger = createLogger({ level: config.logLevel });
  const database = openDatabase(config.database);
  const mailer = createSmtpMailer({ url: config.mail.smtpUrl, from: config.mail.from });
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
  const database = openDatabase(config.database);
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
  if (!(COMMANDS as readonly string[]).includes(command)) {
    console.error(`Unknown command "${command}".\n${USAGE}`);
    process.exitCode = 2;
    return;
  }
  const config = loadConfig(process.env);
  if (command === 'migrate') await migrateCommand(config);
  else if (command === 'mail') await mailCommand(config, argv.includes('--once'));
  else if (command === 'outbox') {
    const limitAt = argv.indexOf('--limit');
    const limit = limitAt >= 0 ? Number(argv[limitAt + 1]) : 50;
    if (!Number.isInteger(limit) || limit < 1) throw new ConfigError(['--limit: expected a whole number of at least 1']);
    await outboxCommand(config, limit);
  } else await serveCommand(config);
}

main(process.argv.slice(2)).catch((error: unknown) => {
  if (error instanceof ConfigError) {
    console.error(`Gatehouse cannot start.\n${error.message}`);
  } else {
    const { code, message } = error as { code?: string; message?: string };
    console.error(`Gatehouse cannot start: ${message ?? String(error)}${code ? ` (${code})` : ''}`);
  }
  process.exit(1);
});
