/** @module The database's settings: which database, how long a statement may take, migrations at start. */
import path from 'node:path';
import { createSettingsReader, defineSettings, type Env } from '../settings.js';

export type DatabaseTarget = { kind: 'sqlite'; filename: string } | { kind: 'postgres'; connectionString: string };

export interface DatabaseSettings {
  database: DatabaseTarget;
  /** Folder for local state: the SQLite file and the generated development JWT secret. */
  dataDir: string;
  /** DATABASE_QUERY_TIMEOUT: PostgreSQL's statement_timeout, and the client's bound on a connection that does not answer. */
  databaseQueryTimeoutMs: number;
  migrateOnStart: boolean;
}

export const databaseSettings = defineSettings({
  name: 'database',
  variables: [
    { name: 'DATABASE_URL', default: 'sqlite:./data/gatehouse.db', meaning: 'postgres://user:password@host:5432/db, sqlite:<path> or sqlite::memory:' },
    {
      name: 'DATABASE_QUERY_TIMEOUT',
      default: '5s',
      meaning: 'PostgreSQL: longest a statement may run, and wait for an answer, before the request gets 503 (250ms, 5s or 1m; a bare number is seconds)',
    },
    { name: 'MIGRATE_ON_START', default: 'true', meaning: 'apply pending database migrations when the server starts (true or false)' },
  ],
  read: (reader): DatabaseSettings => {
    let database: DatabaseTarget = { kind: 'sqlite', filename: './data/gatehouse.db' };
    const rawDatabaseUrl = reader.read('DATABASE_URL');
    if (rawDatabaseUrl !== undefined) {
      if (/^postgres(ql)?:\/\//.test(rawDatabaseUrl)) {
        database = { kind: 'postgres', connectionString: rawDatabaseUrl };
      } else if (rawDatabaseUrl.startsWith('sqlite:') && rawDatabaseUrl.length > 'sqlite:'.length) {
        database = { kind: 'sqlite', filename: rawDatabaseUrl.slice('sqlite:'.length) };
      } else {
        reader.problem('DATABASE_URL: expected postgres://user@host:port/db, sqlite:<path> or sqlite::memory:');
      }
    }
    const dataDir = database.kind === 'sqlite' && database.filename !== ':memory:' ? path.dirname(path.resolve(database.filename)) : path.resolve('data');
    return {
      database: Object.freeze(database),
      dataDir,
      databaseQueryTimeoutMs: reader.durationMs('DATABASE_QUERY_TIMEOUT', 5000, 100, 3_600_000, '100ms to 1h'),
      migrateOnStart: reader.boolean('MIGRATE_ON_START', true),
    };
  },
});

/**
 * The database's settings alone, and the problems with them: `gatehouse migrate` runs before a
 * deployment's other secrets need to exist (a release job, an init container), and `gatehouse
 * doctor` checks the database even when another setting is wrong.
 */
export function readDatabaseSettings(env: Env): { settings: DatabaseSettings; problems: string[] } {
  const problems: string[] = [];
  const settings = databaseSettings.read(createSettingsReader(env, problems), { mode: 'default', baseUrl: '', httpsBaseUrl: false });
  return { settings, problems };
}
