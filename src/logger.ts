/**
 * @module Structured logs (pino). Cookies, authorization headers, passwords and tokens are
 * redacted by path, as a second line of defence: no code logs a request body or headers.
 */
import { pino, type Logger } from 'pino';

export type { Logger };

export const REDACTED_PATHS = [
  'req.headers.cookie',
  'req.headers.authorization',
  'res.headers["set-cookie"]',
  'headers.cookie',
  'headers.authorization',
  '*.password',
  '*.token',
  '*.secret',
  'password',
  'token',
  'secret',
];

export function createLogger(options: { level: string; destination?: pino.DestinationStream }): Logger {
  const settings = { level: options.level, redact: { paths: REDACTED_PATHS, censor: '[redacted]' } };
  return options.destination ? pino(settings, options.destination) : pino(settings);
}
