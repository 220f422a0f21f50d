/**
 * @module `gatehouse users import FILE|-` and `gatehouse users export`, talking to the database
 * directly (no server needed). Import: a result per line (refusals on stderr with their line
 * number, all of them in `--report`), a progress bar when stderr is a terminal, exit 0 when every
 * line was imported or skipped, 1 when some were refused, 2 for bad arguments (UsageError).
 * The file is read a line at a time: memory stays flat however long it is.
 */
import { once } from 'node:events';
import { createReadStream, openSync, closeSync, statSync, createWriteStream, type WriteStream } from 'node:fs';
import { createInterface } from 'node:readline';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { SingleBar, Presets } from 'cli-progress';
import { UsageError } from '../admin/cli.js';
import { systemClock } from '../clock.js';
import type { Config } from '../config.js';
import { createAuditStore } from '../db/audit-store.js';
import { migrateToLatest, openDatabase } from '../db/connect.js';
import { createTransferStore } from '../db/user-transfer-store.js';
import { exportUsers } from './export.js';
import { ON_CONFLICT, importUsers, type ImportDeps, type ImportSummary, type LineResult, type OnConflict } from './import.js';

export const TRANSFER_USAGE = `  import <file|-> [--dry-run] [--on-conflict skip|update|fail] [--report file]
                          users from NDJSON, one a line (- reads stdin); password hashes kept as given
  export [--include-password-hashes]
                          every user as NDJSON in the import format, to stdout`;

function parse(args: string[], usage: string, options: NonNullable<ParseArgsConfig['options']>): ReturnType<typeof parseArgs> {
  try {
    return parseArgs({ args, options, allowPositionals: true, strict: true });
  } catch (error) {
    throw new UsageError((error as Error).message, usage);
  }
}

async function withTransferDeps<T>(config: Readonly<Config>, work: (deps: ImportDeps) => Promise<T>): Promise<T> {
  const database = openDatabase(config.database, { queryTimeoutMs: config.databaseQueryTimeoutMs });
  try {
    if (config.migrateOnStart) await migrateToLatest(database);
    return await work({
      store: createTransferStore(database.kysely),
      // Written at once, not batched: the process ends right after.
      audit: createAuditStore(database.kysely, database.dialect, { batchWrites: false }),
    });
  } finally {
    await database.close();
  }
}

interface ImportArguments {
  source: string;
  dryRun: boolean;
  onConflict: OnConflict;
  report: string | undefined;
}

function importArguments(args: string[], usage: string): ImportArguments {
  const { values, positionals } = parse(args, usage, { 'dry-run': { type: 'boolean' }, 'on-conflict': { type: 'string' }, report: { type: 'string' } });
  if (positionals.length !== 1) throw new UsageError('users import takes one file (or - for stdin).', usage);
  const onConflict = (values['on-conflict'] as string | undefined) ?? 'skip';
  if (!(ON_CONFLICT as readonly string[]).includes(onConflict))
    throw new UsageError(`--on-conflict: expected skip, update or fail, got "${onConflict}"`, usage);
  const source = positionals[0] ?? '-';
  if (source !== '-') {
    try {
      if (!statSync(source).isFile()) throw new Error('not a file');
    } catch {
      throw new UsageError(`users import: cannot read "${source}"`, usage);
    }
  }
  const report = values.report as string | undefined;
  if (report !== undefined) {
    try {
      closeSync(openSync(report, 'w', 0o600));
    } catch {
      throw new UsageError(`--report: cannot write "${report}"`, usage);
    }
  }
  return { source, dryRun: values['dry-run'] === true, onConflict: onConflict as OnConflict, report };
}

/** A bar on stderr while a file is read, when stderr is a terminal; otherwise nothing. */
function progressFor(source: string, input: NodeJS.ReadableStream): { tick(summary: ImportSummary): void; stop(): void } {
  if (source === '-' || process.stderr.isTTY !== true) return { tick: () => {}, stop: () => {} };
  const bar = new SingleBar(
    { stream: process.stderr, format: ' {bar} {percentage}% | {done} lines | {failed} refused', hideCursor: true },
    Presets.shades_classic,
  );
  bar.start(statSync(source).size, 0, { done: 0, failed: 0 });
  return {
    tick: (s) => bar.update((input as unknown as { bytesRead: number }).bytesRead, { done: s.imported + s.updated + s.skipped + s.failed, failed: s.failed }),
    stop: () => bar.stop(),
  };
}

async function runImport(config: Readonly<Config>, args: string[], usage: string): Promise<void> {
  const options = importArguments(args, usage);
  const input = options.source === '-' ? process.stdin : createReadStream(options.source);
  const report: WriteStream | null = options.report === undefined ? null : createWriteStream(options.report);
  const progress = progressFor(options.source, input);
  const running: ImportSummary = { imported: 0, updated: 0, skipped: 0, failed: 0 };
  const onResult = (result: LineResult): void => {
    running[result.status] += 1;
    if (result.status === 'failed') process.stderr.write(`line ${result.line}: ${result.error ?? 'refused'}\n`);
    report?.write(`${JSON.stringify(result)}\n`);
    if ((running.imported + running.updated + running.skipped + running.failed) % 500 === 0) progress.tick(running);
  };
  const summary = await withTransferDeps(config, (deps) =>
    importUsers(
      deps,
      createInterface({ input, crlfDelay: Infinity }),
      { dryRun: options.dryRun, onConflict: options.onConflict, now: systemClock.now() },
      { actor: 'cli', ip: null, userAgent: 'gatehouse-cli' },
      onResult,
    ),
  ).finally(() => progress.stop());
  if (report !== null) {
    report.end();
    await once(report, 'finish');
  }
  const dry = options.dryRun ? ' (dry run: nothing was written)' : '';
  console.log(`Imported ${summary.imported}, updated ${summary.updated}, skipped ${summary.skipped}, refused ${summary.failed}${dry}.`);
  if (summary.failed > 0) process.exitCode = 1;
}

async function runExport(config: Readonly<Config>, args: string[], usage: string): Promise<void> {
  const { values, positionals } = parse(args, usage, { 'include-password-hashes': { type: 'boolean' } });
  if (positionals.length > 0) throw new UsageError(`users export takes no argument, got "${positionals[0]}"`, usage);
  await withTransferDeps(config, async (deps) => {
    for await (const line of exportUsers(deps.store, { includePasswordHashes: values['include-password-hashes'] === true })) {
      if (!process.stdout.write(line)) await once(process.stdout, 'drain');
    }
  });
}

/** `gatehouse users import …` and `gatehouse users export …` (args[0] is `import` or `export`). */
export async function userTransferCommand(config: Readonly<Config>, args: readonly string[], usage: string): Promise<void> {
  const [action, ...rest] = args;
  if (action === 'import') await runImport(config, rest, usage);
  else await runExport(config, rest, usage);
}
