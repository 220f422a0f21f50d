/**
 * @module `gatehouse backup FILE`: a consistent copy of the SQLite database while the server runs.
 * SQLite's online backup API copies the pages under its own locks, so writers go on and the copy
 * is one moment of the database — unlike `cp`, which can catch a file mid-write or leave the WAL
 * behind. PostgreSQL has its own tools (`pg_dump`, base backups): the command says so.
 */
import { closeSync, openSync } from 'node:fs';
import SQLite from 'better-sqlite3';
import type { DatabaseTarget } from './db/settings.js';

/** A backup that cannot be made, with what to do instead (the command prints it, exit 1). */
export class BackupRefused extends Error {
  override name = 'BackupRefused';
}

export interface BackupOutcome {
  file: string;
  pages: number;
}

/**
 * Copies the SQLite database named by `target` into `file`, which must not exist yet (a backup
 * never overwrites another one). The copy is created readable by its owner alone, as the database
 * is: it holds the same emails, password hashes and audit trail.
 */
export async function backupDatabase(target: DatabaseTarget, file: string): Promise<BackupOutcome> {
  if (target.kind === 'postgres') {
    throw new BackupRefused(
      'gatehouse backup copies an SQLite database. For PostgreSQL use its own tools: pg_dump --format=custom --file=gatehouse.dump "$DATABASE_URL" (see docs/production.md).',
    );
  }
  if (target.filename === ':memory:') {
    throw new BackupRefused('DATABASE_URL names an in-memory SQLite database: there is nothing on disk to back up.');
  }
  let source: SQLite.Database;
  try {
    source = new SQLite(target.filename, { fileMustExist: true });
  } catch {
    throw new BackupRefused(`There is no SQLite database at ${target.filename} (DATABASE_URL).`);
  }
  try {
    // 'wx': fails when the file exists; created 0600 before SQLite writes a byte into it.
    try {
      closeSync(openSync(file, 'wx', 0o600));
    } catch (error) {
      const code = (error as { code?: string }).code;
      throw new BackupRefused(code === 'EEXIST' ? `${file} already exists: choose a new file name.` : `Cannot create ${file} (${code ?? 'error'}).`);
    }
    const { totalPages } = await source.backup(file);
    return { file, pages: totalPages };
  } finally {
    source.close();
  }
}
