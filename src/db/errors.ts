/** @module Classifies driver errors so the flows and the HTTP edge never inspect driver internals. */

interface DriverError {
  code?: unknown;
  message?: unknown;
}

/** A unique constraint refused the write (PostgreSQL 23505, SQLite SQLITE_CONSTRAINT_UNIQUE). */
export function isUniqueViolation(error: unknown): boolean {
  const code = (error as DriverError | null)?.code;
  return code === '23505' || code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY';
}

const UNAVAILABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EHOSTUNREACH',
  '57P01', // admin_shutdown
  '57P02', // crash_shutdown
  '57P03', // cannot_connect_now
  '53300', // too_many_connections
  '57014', // query_canceled: the statement outlived DATABASE_QUERY_TIMEOUT (statement_timeout)
  'SQLITE_BUSY',
  'SQLITE_LOCKED',
  'SQLITE_READONLY',
  'SQLITE_FULL',
  'SQLITE_IOERR',
  'SQLITE_CANTOPEN',
]);

/** The database cannot serve right now: the client should retry later (503), not see a 500. */
export function isDatabaseUnavailable(error: unknown): boolean {
  const { code, message } = (error ?? {}) as DriverError;
  if (
    typeof code === 'string' &&
    (UNAVAILABLE_CODES.has(code) ||
      code.startsWith('08') ||
      code.startsWith('SQLITE_IOERR') ||
      code.startsWith('SQLITE_READONLY') ||
      code.startsWith('SQLITE_BUSY'))
  ) {
    return true;
  }
  return (
    typeof message === 'string' &&
    /Connection terminated|timeout exceeded when trying to connect|Query read timeout|connect ECONNREFUSED|Client has encountered a connection error/.test(
      message,
    )
  );
}
