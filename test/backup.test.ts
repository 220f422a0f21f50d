/**
 * `gatehouse backup FILE`: the built CLI copies a live SQLite database with SQLite's online backup
 * (the copy holds what was written, readable by its owner alone), never overwrites a file, and
 * sends PostgreSQL users to pg_dump.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';

const CLI = path.resolve('dist/cli.js');

function run(args: string[], env: Record<string, string>, cwd: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [CLI, ...args], { env: { PATH: process.env.PATH ?? '', ...env }, cwd, timeout: 60_000 }, (error, stdout, stderr) => {
      resolve({ code: error === null ? 0 : typeof error.code === 'number' ? error.code : -1, stdout, stderr });
    });
  });
}

describe('gatehouse backup', { timeout: 60_000 }, () => {
  let dir: string;
  let env: Record<string, string>;

  beforeAll(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'gatehouse-backup-'));
    env = { DATABASE_URL: `sqlite:${path.join(dir, 'gatehouse.db')}` };
    expect((await run(['migrate'], env, dir)).code).toBe(0);
    writeFileSync(path.join(dir, 'users.ndjson'), `${JSON.stringify({ email: 'kept@example.com', emailVerified: true })}\n`);
    const imported = await run(['users', 'import', 'users.ndjson'], env, dir);
    expect(imported.code, imported.stderr).toBe(0);
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  test('copies the database, users included, into a file only its owner can read', async () => {
    // The source stays open for writing meanwhile, as a running server holds it (WAL mode).
    const live = new SQLite(path.join(dir, 'gatehouse.db'));
    try {
      const result = await run(['backup', 'copy.db'], env, dir);
      expect(result.code, result.stderr).toBe(0);
      expect(result.stdout).toMatch(/Backed up \d+ pages to copy\.db/);
    } finally {
      live.close();
    }
    expect(statSync(path.join(dir, 'copy.db')).mode & 0o777).toBe(0o600);
    const copy = new SQLite(path.join(dir, 'copy.db'), { readonly: true });
    try {
      expect(copy.prepare('select email from users').all()).toEqual([{ email: 'kept@example.com' }]);
      expect(copy.prepare('select count(*) as n from kysely_migration').get()).toEqual({ n: expect.any(Number) });
    } finally {
      copy.close();
    }
  });

  test('never overwrites a file, needs a file name, and sends PostgreSQL to pg_dump', async () => {
    writeFileSync(path.join(dir, 'taken.db'), 'not a backup');
    const taken = await run(['backup', 'taken.db'], env, dir);
    expect(taken.code).toBe(1);
    expect(taken.stderr).toContain('taken.db already exists');

    const unnamed = await run(['backup'], env, dir);
    expect(unnamed.code).toBe(2);
    expect(unnamed.stderr).toContain('backup: name the file to write');

    const postgres = await run(['backup', 'pg.db'], { DATABASE_URL: 'postgres://postgres@127.0.0.1:1/none' }, dir);
    expect(postgres.code).toBe(1);
    expect(postgres.stderr).toContain('pg_dump');

    const missing = await run(['backup', 'none-copy.db'], { DATABASE_URL: `sqlite:${path.join(dir, 'absent.db')}` }, dir);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('There is no SQLite database');
  });
});
