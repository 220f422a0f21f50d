/**
 * @module Statements PostgreSQL keeps prepared on each connection. The session check runs on every
 * request of the application behind Gatehouse; as a named statement, each connection parses and
 * plans it once, and every later check sends only its parameter (Bind/Execute), which saves the
 * database and this process work on the hot path (docs/performance.md has the figures).
 *
 * Only statements whose text is fixed are registered here, at store creation: the set is bounded
 * by the code, never by the traffic (node-postgres keeps every named statement per connection for
 * the connection's life).
 */
import { createHash } from 'node:crypto';

const names = new Map<string, string>();

/** Marks `sql` to be run as a named prepared statement on PostgreSQL; returns it unchanged. */
export function keepPrepared(sql: string): string {
  if (!names.has(sql)) names.set(sql, `gatehouse_${createHash('sha256').update(sql).digest('hex').slice(0, 16)}`);
  return sql;
}

/** The statement name under which `sql` is kept prepared, or undefined for any other statement. */
export function preparedName(sql: string): string | undefined {
  return names.get(sql);
}
