/**
 * @module The operators' inputs, validated once for both faces: the admin API's query strings and
 * the CLI's options arrive as text and leave as typed searches, or as 400 `validation_error`
 * (the CLI prints its issues and exits 2).
 */
import { isIP } from 'node:net';
import { z } from 'zod';
import { validationError } from '../errors.js';
import { toValidationIssues } from '../http/json-body.js';
import { hasControlCharacter } from '../plain-text.js';
import type { AuditCursor, UserCursor } from './store.js';

export const DEFAULT_PAGE_SIZE = 50;
export const MAX_PAGE_SIZE = 100;

/** Users' ids are UUIDs (randomUUID): only that form reaches a query (a NUL byte, for one, is an error in PostgreSQL). */
export const USER_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

const limit = z
  .string()
  .regex(/^\d{1,3}$/, `must be a whole number from 1 to ${MAX_PAGE_SIZE}`)
  .transform(Number)
  .pipe(z.number().int().min(1, `must be a whole number from 1 to ${MAX_PAGE_SIZE}`).max(MAX_PAGE_SIZE, `must be a whole number from 1 to ${MAX_PAGE_SIZE}`))
  .optional();
const cursor = z.string().max(512, 'is not a cursor from this list').optional();
// Date.parse alone would read 2026-02-30 as March 2nd; zod's ISO date checks the day against its month.
const calendarDate = z.iso.date();
const isoTime = z
  .string()
  .refine(
    (text) =>
      /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?(Z|[+-]\d{2}:\d{2}))?$/.test(text) &&
      calendarDate.safeParse(text.slice(0, 10)).success &&
      !Number.isNaN(Date.parse(text)),
    {
      message: 'must be an ISO 8601 time such as 2026-11-24T09:00:00Z, or a date such as 2026-11-24',
    },
  )
  .transform((text) => Date.parse(text))
  .optional();

export const userListQuery = z.object({
  // Control characters are in no email or id; a NUL byte is an error in PostgreSQL, not a miss.
  query: z
    .string()
    // Before the trim: a query of only line breaks or tabs is refused, not read as no query at all.
    .refine((text) => !hasControlCharacter(text), 'must not hold control characters')
    .trim()
    .max(320, 'must be at most 320 characters')
    .optional(),
  limit,
  cursor,
});

export const auditQuery = z
  .object({
    userId: z.string().regex(USER_ID, 'must be a user id (a UUID)').optional(),
    type: z
      .string()
      .regex(/^[a-z][a-z0-9_]{0,63}$/, 'must be an event type such as login_failure')
      .optional(),
    since: isoTime,
    until: isoTime,
    limit,
    cursor,
  })
  .refine((query) => query.since === undefined || query.until === undefined || query.since <= query.until, {
    message: 'must not be before since',
    path: ['until'],
  });

export interface UserListInput {
  query: string | null;
  limit: number;
  after: UserCursor | null;
}

export interface AuditListInput {
  userId: string | null;
  type: string | null;
  since: number | null;
  until: number | null;
  limit: number;
  before: AuditCursor | null;
}

type RawQuery = Record<string, string | undefined>;

export function parse<S extends z.ZodType>(schema: S, raw: RawQuery): z.output<S> {
  const result = schema['~standard'].validate(raw);
  if (result instanceof Promise) throw new Error('query schemas must be synchronous');
  if (result.issues !== undefined) throw validationError(toValidationIssues(result.issues));
  return result.value;
}

function badCursor(): never {
  throw validationError([{ path: 'cursor', message: 'is not a cursor from this list' }]);
}

/** The opaque cursor: base64url of JSON. Only what this module wrote reads back. */
export function encodeCursor(value: unknown): string {
  return Buffer.from(JSON.stringify(value)).toString('base64url');
}

function decodeCursor(text: string): unknown {
  try {
    return JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
  } catch {
    return badCursor();
  }
}

export function parseUserListQuery(raw: RawQuery): UserListInput {
  const query = parse(userListQuery, raw);
  let after: UserCursor | null = null;
  if (query.cursor !== undefined) {
    const value = decodeCursor(query.cursor);
    if (!Array.isArray(value) || value.length !== 2 || !Number.isSafeInteger(value[0]) || typeof value[1] !== 'string' || !USER_ID.test(value[1])) badCursor();
    after = { createdAt: value[0] as number, id: value[1] };
  }
  return { query: query.query === undefined || query.query === '' ? null : query.query.toLowerCase(), limit: query.limit ?? DEFAULT_PAGE_SIZE, after };
}

export function parseAuditQuery(raw: RawQuery): AuditListInput {
  const query = parse(auditQuery, raw);
  let before: AuditCursor | null = null;
  if (query.cursor !== undefined) {
    // [time, id] of the page's last event (a cursor of an earlier version, [id], is refused).
    const value = decodeCursor(query.cursor);
    if (!Array.isArray(value) || value.length !== 2 || !value.every((part) => Number.isSafeInteger(part)) || (value[1] as number) < 1) badCursor();
    before = { at: value[0] as number, id: value[1] as number };
  }
  return {
    userId: query.userId ?? null,
    type: query.type ?? null,
    since: query.since ?? null,
    until: query.until ?? null,
    limit: query.limit ?? DEFAULT_PAGE_SIZE,
    before,
  };
}

/**
 * A client address as an operator types it, in the form the login lock counts it
 * (http/client-ip.ts): lower case, an IPv4 address mapped into IPv6 as the IPv4 address.
 */
export function parseIpAddress(text: string): string {
  const trimmed = text.trim();
  const mapped = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(trimmed);
  const ip = mapped?.[1] ?? trimmed.toLowerCase();
  if (ip.length > 64 || isIP(ip) === 0) throw validationError([{ path: 'ip', message: 'must be an IPv4 or IPv6 address such as 203.0.113.7' }]);
  return ip;
}
