/**
 * @module `gatehouse users …` and `gatehouse audit …` as the admin capability's commands: the
 * database and the login locks, then the same flows as the admin API (cli.ts, flow.ts).
 */
import type { CliCommand } from '../capability.js';
import { systemClock } from '../clock.js';
import type { Config } from '../config.js';
import { createAdminStore } from '../db/admin-store.js';
import { migrateToLatest, openDatabase } from '../db/connect.js';
import { createStores } from '../db/stores.js';
import { openLimiterBackend } from '../limits/limiter-backend.js';
import { createLoginLock } from '../limits/login-lock.js';
import { createLogger } from '../logger.js';
import { TRANSFER_USAGE, userTransferCommand } from '../user-transfer/cli.js';
import { AUDIT_USAGE, USERS_USAGE as USER_TOOLS_USAGE, UsageError, auditCommand, usersCommand, type CliParts } from './cli.js';

/** The user tools, and import and export (user-transfer/cli.ts). */
const USERS_USAGE = `${USER_TOOLS_USAGE}\n${TRANSFER_USAGE}`;

/** Opens what the commands use, runs `command`, and closes it all, whatever happens. */
async function withAdminParts(config: Readonly<Config>, command: (parts: CliParts) => Promise<void>): Promise<void> {
  const database = openDatabase(config.database, { queryTimeoutMs: config.databaseQueryTimeoutMs });
  let limiter;
  try {
    if (config.migrateOnStart) await migrateToLatest(database);
    // Warnings (Redis unreachable) on stderr: stdout may be ndjson or csv for another program.
    const logger = createLogger({ level: 'warn', destination: process.stderr });
    limiter = await openLimiterBackend({
      redisUrl: config.redisUrl,
      redisTimeoutMs: config.redisTimeoutMs,
      postgresPool: database.postgresPool,
      keyPrefix: config.redisKeyPrefix,
      logger,
    });
    await command({
      deps: {
        stores: createStores(database.kysely, database.dialect),
        admin: createAdminStore(database.kysely),
        loginLock: createLoginLock(limiter, config.lockout),
      },
      limiterKind: limiter.kind,
      now: () => systemClock.now(),
      out: (line: string) => console.log(line),
      err: (line: string) => console.error(line),
    });
  } finally {
    await limiter?.close();
    await database.close();
  }
}

const wantsHelp = (args: readonly string[]): boolean => args[0] === '--help' || args[0] === '-h';

export const ADMIN_COMMANDS: readonly CliCommand[] = [
  {
    name: 'users',
    summary: "users <list|show|disable|enable|revoke-sessions|unlock|ip-locks|delete|import|export> …  operators' user tools (gatehouse users --help)",
    usage: USERS_USAGE,
    async run(config, args) {
      if (args[0] === undefined) throw new UsageError('Name a users command.', USERS_USAGE);
      if (wantsHelp(args) || args[0] === 'help') return void console.log(USERS_USAGE);
      if (args[0] === 'import' || args[0] === 'export') return userTransferCommand(config, args, USERS_USAGE);
      await withAdminParts(config, (parts) => usersCommand(parts, [...args]));
    },
  },
  {
    name: 'audit',
    summary: 'audit [--user u] [--type t] [--since iso] [--until iso] [--limit n] [--format table|ndjson|csv]  the audit trail',
    usage: AUDIT_USAGE,
    async run(config, args) {
      if (wantsHelp(args)) return void console.log(AUDIT_USAGE);
      await withAdminParts(config, (parts) => auditCommand(parts, [...args]));
    },
  },
];
