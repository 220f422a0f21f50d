/**
 * @module `gatehouse orgs …`: the operators' organization tools, talking to the database directly
 * (no server needed), through the same functions as the admin API (operators.ts), audited with
 * `metadata.actor` = `cli`.
 *
 * Bad arguments throw UsageError (src/cli.ts prints it with the usage and exits 2); an unknown
 * organization is the 404's message and exit 1.
 */
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { UsageError, cell, csvField, table } from '../admin/cli.js';
import type { CliCommand } from '../capability.js';
import { systemClock } from '../clock.js';
import type { Config } from '../config.js';
import { migrateToLatest, openDatabase } from '../db/connect.js';
import { createStores } from '../db/stores.js';
import { AppError } from '../errors.js';
import {
  deleteOrganizationAsOperator,
  findOrganizationByReference,
  parseOrganizationListQuery,
  searchOrganizations,
  showOrganization,
  type OperatorContext,
  type OrganizationOperatorDeps,
} from './operators.js';

export const ORGS_USAGE = `Usage: gatehouse orgs <command> [options]
  list [--query q] [--limit n] [--cursor c] [--format table|ndjson|csv]
                          organizations whose name or slug contains q (or whose id is q), oldest first
  show <id|slug>          one organization with its members and their roles
  delete <id|slug> --yes  deletes the organization: every member loses it (the audit rows stay)`;

type Format = 'table' | 'ndjson' | 'csv';
const ORGANIZATION_COLUMNS = ['id', 'name', 'slug', 'members', 'createdAt'] as const;
const MEMBER_COLUMNS = ['userId', 'email', 'role', 'joinedAt'] as const;

function parse(args: readonly string[], options: NonNullable<ParseArgsConfig['options']>): ReturnType<typeof parseArgs> {
  try {
    return parseArgs({ args: [...args], options, allowPositionals: true, strict: true });
  } catch (error) {
    throw new UsageError((error as Error).message, ORGS_USAGE);
  }
}

function formatOf(value: unknown): Format {
  if (value === undefined) return 'table';
  if (value === 'table' || value === 'ndjson' || value === 'csv') return value;
  throw new UsageError(`--format: expected table, ndjson or csv, got "${String(value)}"`, ORGS_USAGE);
}

/** A validation refusal of the shared query parser, as a usage error naming the options. */
function asUsage<T>(work: () => T): T {
  try {
    return work();
  } catch (error) {
    if (error instanceof AppError && error.code === 'validation_error') {
      throw new UsageError((error.issues ?? []).map((issue) => `--${issue.path}: ${issue.message}`).join('; ') || error.message, ORGS_USAGE);
    }
    throw error;
  }
}

function printRecords<T>(format: Format, header: readonly (keyof T & string)[], records: readonly T[]): void {
  const row = (record: T) => header.map((column) => record[column]);
  if (format === 'ndjson') for (const record of records) console.log(JSON.stringify(record));
  else if (format === 'csv') for (const line of [header, ...records.map(row)]) console.log(line.map(csvField).join(','));
  else for (const line of table(header, records.map(row))) console.log(line);
}

/** The command line's stand-in for a request: no client address (as the other commands' audit rows), its own user agent. */
function cliContext(): OperatorContext {
  return { ip: null, userAgent: 'gatehouse-cli', now: systemClock.now() };
}

async function listAction(deps: OrganizationOperatorDeps, rest: readonly string[]): Promise<void> {
  const { values, positionals } = parse(rest, { query: { type: 'string' }, limit: { type: 'string' }, cursor: { type: 'string' }, format: { type: 'string' } });
  if (positionals.length > 0) throw new UsageError(`orgs list takes no argument, got "${positionals[0]}"`, ORGS_USAGE);
  const format = formatOf(values.format);
  const raw = { query: values.query, limit: values.limit, cursor: values.cursor } as Record<string, string | undefined>;
  const { organizations, nextCursor } = await searchOrganizations(
    deps,
    asUsage(() => parseOrganizationListQuery(raw)),
  );
  if (format === 'table' && organizations.length === 0) console.log('No organizations.');
  else printRecords(format, ORGANIZATION_COLUMNS, organizations);
  if (nextCursor !== null) console.error(`More organizations follow: --cursor ${nextCursor}`);
}

async function singleAction(deps: OrganizationOperatorDeps, action: 'show' | 'delete', rest: readonly string[]): Promise<void> {
  const { values, positionals } = parse(rest, action === 'delete' ? { yes: { type: 'boolean' } } : {});
  const [reference] = positionals;
  if (positionals.length !== 1 || reference === undefined) throw new UsageError(`orgs ${action} takes one organization, by id or slug.`, ORGS_USAGE);
  if (action === 'delete' && values.yes !== true) {
    throw new UsageError('orgs delete removes the organization for every member, for good: add --yes to confirm.', ORGS_USAGE);
  }
  const organization = await findOrganizationByReference(deps, reference);
  if (action === 'delete') {
    await deleteOrganizationAsOperator(deps, organization, { actor: 'cli', ctx: cliContext() });
    console.log(`Deleted organization ${organization.slug} (${organization.id}).`);
    return;
  }
  const shown = await showOrganization(deps, organization);
  for (const [key, value] of Object.entries({ ...shown.organization, members: shown.members.length })) console.log(`${`${key}:`.padEnd(11)}${cell(value)}`);
  if (shown.members.length > 0) {
    console.log('');
    printRecords('table', MEMBER_COLUMNS, shown.members);
  }
}

async function withDeps(config: Readonly<Config>, work: (deps: OrganizationOperatorDeps) => Promise<void>): Promise<void> {
  const database = openDatabase(config.database, { queryTimeoutMs: config.databaseQueryTimeoutMs });
  try {
    if (config.migrateOnStart) await migrateToLatest(database);
    await work({ stores: createStores(database.kysely, database.dialect) });
  } finally {
    await database.close();
  }
}

export const ORGANIZATION_COMMANDS: readonly CliCommand[] = [
  {
    name: 'orgs',
    summary: 'orgs <list|show|delete> …  organizations: search, show with members, delete (gatehouse orgs --help)',
    usage: ORGS_USAGE,
    async run(config, args) {
      const [action, ...rest] = args;
      if (action === undefined) throw new UsageError('Name an orgs command.', ORGS_USAGE);
      if (action === '--help' || action === '-h' || action === 'help') return void console.log(ORGS_USAGE);
      if (action !== 'list' && action !== 'show' && action !== 'delete') throw new UsageError(`Unknown orgs command "${action}".`, ORGS_USAGE);
      await withDeps(config, (deps) => (action === 'list' ? listAction(deps, rest) : singleAction(deps, action, rest)));
    },
  },
];
