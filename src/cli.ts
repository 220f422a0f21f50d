#!/usr/bin/env node
/**
 * @module The `gatehouse` command: `serve` (default) runs the server, `migrate` applies the
 * database migrations. Configuration comes from the environment (README).
 */
import { ConfigError, loadConfig, type Config } from './config.js';
import { migrateToLatest, openDatabase } from './db/connect.js';
import { withPersistedDevSecret } from './dev-secret.js';
import { createLogger } from './logger.js';
import { startServer } from './server.js';

const USAGE = `Usage: gatehouse [serve|migrate]
  serve    run the server (default); configuration from the environment, see the README
  migrate  apply pending database migrations and exit`;

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

async function main(argv: string[]): Promise<void> {
  const command = argv[0] ?? 'serve';
  if (command === '--help' || command === '-h' || command === 'help') {
    console.log(USAGE);
    return;
  }
  if (command !== 'serve' && command !== 'migrate') {
    console.error(`Unknown command "${command}".\n${USAGE}`);
    process.exitCode = 2;
    return;
  }
  const config = loadConfig(process.env);
  if (command === 'migrate') await migrateCommand(config);
  else await serveCommand(config);
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
