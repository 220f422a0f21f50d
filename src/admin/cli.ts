/**
 * @module The operators' commands (DESIGN §9.6): `gatehouse users …` and `gatehouse audit …`,
 * talking to the database directly (no server needed), through the same flows as the admin API
 * (flow.ts), audited with `metadata.actor` = `cli`.
 *
 * Bad arguments throw UsageError (src/cli.ts prints it and exits 2, never a stack trace); an
 * unknown user is the flows' 404, printed and exit 1.
 */
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { AppError } from '../errors.js';
import type { LimiterStoreKind } from '../limits/limiter-backend.js';
import {
  deleteUser,
  disableUser,
  enableUser,
  findUserByEmailOrId,
  listAuditEvents,
  listIpLocks,
  listUsers,
  revokeUserSessions,
  showUser,
  unlockIp,
  unlockUser,
  type AdminAuditEvent,
  type AdminDeps,
  type AdminUser,
  type Operator,
} from './flow.js';
import { MAX_PAGE_SIZE, USER_ID, parseAuditQuery, parseIpAddress, parseUserListQuery } from './input.js';

export const USERS_USAGE = `Usage: gatehouse users <command> [options]
  list [--query q] [--limit n] [--cursor c] [--format table|ndjson|csv]
                          users whose email contains q (or whose id is q), oldest first
  show <email|id>         one user: sessions, providers, two-factor, lock
  disable <email|id>      no sign-in by any method; ends every session
  enable <email|id>       lifts a disable
  revoke-sessions <email|id>  ends every session
  unlock <email|id>       lifts the login lock of the user's email
  unlock --ip <address>   lifts the login lock of a client address
  ip-locks [--format table|ndjson|csv]
                          the client addresses under a login lock now
  delete <email|id> --yes deletes the user and everything of it (the audit rows stay)`;

export const AUDIT_USAGE = `Usage: gatehouse audit [--user email|id] [--type t] [--since iso] [--until iso] [--limit n] [--format table|ndjson|csv]
  the audit trail, newest first (default: the last 50 events)`;

/** Bad arguments: printed with the usage, exit code 2. */
export class UsageError extends Error {
  constructor(
    message: string,
    readonly usage: string,
  ) {
    super(message);
    this.name = 'UsageError';
  }
}

export interface CliParts {
  deps: AdminDeps;
  /** Where login locks are counted: in `memory`, only the server process that counted them sees them. */
  limiterKind: LimiterStoreKind;
  now: () => Date;
  out: (line: string) => void;
  err: (line: string) => void;
}

type Format = 'table' | 'ndjson' | 'csv';
const FORMATS: readonly Format[] = ['table', 'ndjson', 'csv'];
/** The most events one `gatehouse audit` prints (read in pages of MAX_PAGE_SIZE). */
const MAX_CLI_EVENTS = 100_000;

function parse(args: string[], usage: string, options: NonNullable<ParseArgsConfig['options']>): ReturnType<typeof parseArgs> {
  try {
    return parseArgs({ args, options, allowPositionals: true, strict: true });
  } catch (error) {
    throw new UsageError((error as Error).message, usage);
  }
}

function formatOf(value: unknown, usage: string): Format {
  if (value === undefined) return 'table';
  if (typeof value === 'string' && (FORMATS as readonly string[]).includes(value)) return value as Format;
  throw new UsageError(`--format: expected table, ndjson or csv, got "${String(value)}"`, usage);
}

/** A validation refusal of the shared input parsers, as a usage error naming the options. */
function asUsage<T>(usage: string, work: () => T): T {
  try {
    return work();
  } catch (error) {
    if (error instanceof AppError && error.code === 'validation_error') {
      const detail = (error.issues ?? []).map((issue) => `--${issue.path}: ${issue.message}`).join('; ');
      throw new UsageError(detail || error.message, usage);
    }
    throw error;
  }
}

// eslint-disable-next-line no-control-regex -- finding control characters is the point
const CONTROL_CHARACTERS = /[\u0000-\u001f\u007f-\u009f]/g;

/** One table cell: control characters (a user agent may carry terminal escapes) shown as `?`. */
export function cell(value: unknown): string {
  const text = value === null || value === undefined ? '-' : typeof value === 'string' ? value : JSON.stringify(value);
  return text.replace(CONTROL_CHARACTERS, '?');
}

/** Columns padded to their widest cell (at most 60 characters); shared with `gatehouse orgs`. */
export function table(header: readonly string[], rows: unknown[][]): string[] {
  const cells = rows.map((row) => row.map(cell));
  const widths = header.map((name, i) => Math.min(60, Math.max(name.length, ...cells.map((row) => (row[i] ?? '').length))));
  const line = (row: string[]) =>
    row
      .map((text, i) => {
        const width = widths[i] ?? 0;
        if (i === row.length - 1) return text;
        return text.length > width ? `${text.slice(0, width - 1)}…` : text.padEnd(width);
      })
      .join('  ')
      .trimEnd();
  return [line([...header]), ...cells.map(line)];
}

/**
 * RFC 4180: every field quoted, quotes doubled. A field that a spreadsheet would run as a formula
 * (starting with =, +, -, @, a tab or a carriage return: a user agent is anyone's text) gets a
 * leading apostrophe.
 */
export function csvField(value: unknown): string {
  let text = value === null || value === undefined ? '' : typeof value === 'string' ? value : JSON.stringify(value);
  if (/^[=+\-@\t\r]/.test(text)) text = `'${text}`;
  return `"${text.replace(/"/g, '""')}"`;
}

function printRows(
  parts: CliParts,
  format: Format,
  header: string[],
  records: Record<string, unknown>[],
  row: (record: Record<string, unknown>) => unknown[],
): void {
  if (format === 'ndjson') for (const record of records) parts.out(JSON.stringify(record));
  else if (format === 'csv') {
    parts.out(header.map(csvField).join(','));
    for (const record of records) parts.out(row(record).map(csvField).join(','));
  } else for (const line of table(header, records.map(row))) parts.out(line);
}

const USER_COLUMNS = ['id', 'email', 'emailVerified', 'hasPassword', 'createdAt', 'lastLoginAt', 'disabledAt'] as const;

function cliOperator(parts: CliParts): Operator {
  return { actor: 'cli', ip: null, userAgent: 'gatehouse-cli', now: parts.now() };
}

function warnIfLocksInMemory(parts: CliParts): void {
  if (parts.limiterKind !== 'memory') return;
  parts.err(
    'Note: login locks are counted in the server process memory (no REDIS_URL, SQLite database): this command cannot see or lift them. Use the admin API of the running server: POST /api/admin/users/<id>/unlock, GET /api/admin/ip-locks, POST /api/admin/ip-locks/<ip>/unlock.',
  );
}

/** `users ip-locks` and `users unlock --ip`: the login locks of client addresses. */
async function ipLockCommand(parts: CliParts, action: 'ip-locks' | 'unlock', rest: string[]): Promise<void> {
  const usage = USERS_USAGE;
  warnIfLocksInMemory(parts);
  if (action === 'ip-locks') {
    const { values, positionals } = parse(rest, usage, { format: { type: 'string' } });
    if (positionals.length > 0) throw new UsageError(`users ip-locks takes no argument, got "${positionals[0]}"`, usage);
    const format = formatOf(values.format, usage);
    const { locks } = await listIpLocks(parts.deps, parts.now());
    if (format === 'table' && locks.length === 0) parts.out('No client address is locked.');
    else printRows(parts, format, ['ip', 'secondsLeft'], locks as unknown as Record<string, unknown>[], (lock) => [lock.ip, lock.secondsLeft]);
    return;
  }
  const { values, positionals } = parse(rest, usage, { ip: { type: 'string' } });
  if (positionals.length > 0 || typeof values.ip !== 'string') throw new UsageError('users unlock --ip takes one address: --ip 203.0.113.7', usage);
  const ip = asUsage(usage, () => parseIpAddress(values.ip as string));
  const { wasLocked } = await unlockIp(parts.deps, ip, cliOperator(parts));
  parts.out(wasLocked ? `Unlocked the address ${ip}.` : `The address ${ip} was not locked; its failed attempts are forgotten.`);
}

export async function usersCommand(parts: CliParts, args: string[]): Promise<void> {
  const [action, ...rest] = args;
  const usage = USERS_USAGE;
  if (action === undefined || action === '--help' || action === '-h' || action === 'help') {
    if (action === undefined) throw new UsageError('Name a users command.', usage);
    parts.out(usage);
    return;
  }
  if (action === 'list') {
    const { values, positionals } = parse(rest, usage, {
      query: { type: 'string' },
      limit: { type: 'string' },
      cursor: { type: 'string' },
      format: { type: 'string' },
    });
    if (positionals.length > 0) throw new UsageError(`users list takes no argument, got "${positionals[0]}"`, usage);
    const format = formatOf(values.format, usage);
    const input = asUsage(usage, () =>
      parseUserListQuery({ query: values.query as string | undefined, limit: values.limit as string | undefined, cursor: values.cursor as string | undefined }),
    );
    const { users, nextCursor } = await listUsers(parts.deps, input);
    const records = users as unknown as Record<string, unknown>[];
    if (format === 'table' && users.length === 0) parts.out('No users.');
    else printRows(parts, format, [...USER_COLUMNS], records, (user) => USER_COLUMNS.map((column) => (user as unknown as AdminUser)[column]));
    if (nextCursor !== null) parts.err(`More users follow: --cursor ${nextCursor}`);
    return;
  }
  if (action === 'ip-locks' || (action === 'unlock' && rest.some((arg) => arg === '--ip' || arg.startsWith('--ip='))))
    return ipLockCommand(parts, action, rest);
  const single = ['show', 'disable', 'enable', 'revoke-sessions', 'unlock', 'delete'];
  if (!single.includes(action)) throw new UsageError(`Unknown users command "${action}".`, usage);
  const { values, positionals } = parse(rest, usage, action === 'delete' ? { yes: { type: 'boolean' } } : {});
  if (positionals.length !== 1) throw new UsageError(`users ${action} takes one user, by email or id.`, usage);
  const [reference = ''] = positionals;
  if (action === 'delete' && values.yes !== true) {
    throw new UsageError(`users delete removes the user and everything of it for good: add --yes to confirm.`, usage);
  }
  const user = await findUserByEmailOrId(parts.deps, reference);
  const name = user.email ?? user.id;
  switch (action) {
    case 'show': {
      warnIfLocksInMemory(parts);
      const details = await showUser(parts.deps, user, parts.now());
      for (const [key, value] of Object.entries(details)) parts.out(`${`${key}:`.padEnd(18)}${cell(value)}`);
      return;
    }
    case 'disable': {
      const { sessionsRevoked } = await disableUser(parts.deps, user, cliOperator(parts));
      parts.out(`Disabled ${name}; ${sessionsRevoked} session(s) revoked.`);
      return;
    }
    case 'enable':
      await enableUser(parts.deps, user, cliOperator(parts));
      parts.out(`Enabled ${name}.`);
      return;
    case 'revoke-sessions': {
      const { sessionsRevoked } = await revokeUserSessions(parts.deps, user, cliOperator(parts));
      parts.out(`${sessionsRevoked} session(s) of ${name} revoked.`);
      return;
    }
    case 'unlock': {
      warnIfLocksInMemory(parts);
      const { wasLocked } = await unlockUser(parts.deps, user, cliOperator(parts));
      parts.out(
        wasLocked
          ? `Unlocked ${name}.`
          : // The refusal someone reports may be their address's lock, not the account's.
            `${name} was not locked; its failed attempts are forgotten. If sign-ins are still refused, the address may be locked: gatehouse users ip-locks`,
      );
      return;
    }
    default:
      await deleteUser(parts.deps, user, cliOperator(parts));
      parts.out(`Deleted ${name}.`);
  }
}

const AUDIT_COLUMNS = ['id', 'at', 'type', 'userId', 'ip', 'userAgent', 'metadata'] as const;

export async function auditCommand(parts: CliParts, args: string[]): Promise<void> {
  const usage = AUDIT_USAGE;
  if (args[0] === '--help' || args[0] === '-h') {
    parts.out(usage);
    return;
  }
  const { values, positionals } = parse(args, usage, {
    user: { type: 'string' },
    type: { type: 'string' },
    since: { type: 'string' },
    until: { type: 'string' },
    limit: { type: 'string' },
    format: { type: 'string' },
  });
  if (positionals.length > 0) throw new UsageError(`audit takes no argument, got "${positionals[0]}"`, usage);
  const format = formatOf(values.format, usage);
  const rawLimit = values.limit as string | undefined;
  const limit = rawLimit === undefined ? 50 : /^\d{1,6}$/.test(rawLimit) ? Number(rawLimit) : NaN;
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_CLI_EVENTS)
    throw new UsageError(`--limit: must be a whole number from 1 to ${MAX_CLI_EVENTS}`, usage);
  // An id is taken as it is (a deleted user's rows stay under it); an email names a user that exists.
  const userRef = values.user as string | undefined;
  const userId =
    userRef === undefined ? undefined : USER_ID.test(userRef.toLowerCase()) ? userRef.toLowerCase() : (await findUserByEmailOrId(parts.deps, userRef)).id;
  const input = asUsage(usage, () =>
    parseAuditQuery({ userId, type: values.type as string | undefined, since: values.since as string | undefined, until: values.until as string | undefined }),
  );
  const events: AdminAuditEvent[] = [];
  let before = input.before;
  for (;;) {
    const page = await listAuditEvents(parts.deps, { ...input, before, limit: Math.min(MAX_PAGE_SIZE, limit - events.length) });
    events.push(...page.events);
    const last = page.events.at(-1);
    if (page.nextCursor === null || last === undefined || events.length >= limit) break;
    before = { at: Date.parse(last.at), id: last.id };
  }
  if (format === 'table' && events.length === 0) parts.out('No audit events match.');
  else
    printRows(parts, format, [...AUDIT_COLUMNS], events as unknown as Record<string, unknown>[], (event) =>
      AUDIT_COLUMNS.map((column) => (event as unknown as AdminAuditEvent)[column]),
    );
}
