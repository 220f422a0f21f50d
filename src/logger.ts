/**
 * @module Structured logs (pino). Cookies, authorization headers, passwords and tokens are
 * redacted by path, as a second line of defence: no code logs a request body or headers.
 * The library logs JSON lines; the command line prints pino-pretty's readable lines instead when
 * it writes to a terminal (`createCliLogger`).
 */
import { pino, type Logger } from 'pino';
import { requireOptional } from './lazy-require.js';

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

/**
 * The field under which the start-up lines (the banner, the settings file read) carry their
 * details for JSON readers. Pretty lines leave it out: their message already says the same.
 */
export const START_DETAILS_KEY = 'start';

export function createLogger(options: { level: string; destination?: pino.DestinationStream }): Logger {
  const settings = { level: options.level, redact: { paths: REDACTED_PATHS, censor: '[redacted]' } };
  return options.destination ? pino(settings, options.destination) : pino(settings);
}

export type LogFormat = 'json' | 'pretty';

/** LOG_FORMAT wins; unset, a person at a terminal gets readable lines and anything else (a pipe, a file, a log collector) JSON. */
export function chooseLogFormat(setting: 'auto' | LogFormat, stdoutIsTerminal: boolean): LogFormat {
  if (setting !== 'auto') return setting;
  return stdoutIsTerminal ? 'pretty' : 'json';
}

/**
 * The command line's logger. JSON is pino's own, unchanged. Pretty is pino-pretty's formatter,
 * loaded here and only here, so JSON mode never loads it (start time and memory stay as they
 * were). Its formatter writes synchronously to stdout, as pino does by default: pino-pretty's
 * own stream is asynchronous and would lose the last lines when the process exits after a stop.
 */
export function createCliLogger(options: { level: string; format: LogFormat }): Logger {
  if (options.format === 'json') return createLogger({ level: options.level });
  const { prettyFactory, isColorSupported } = requireOptional('pino-pretty') as typeof import('pino-pretty');
  const prettify = prettyFactory({
    // colorette's answer: colours on a terminal, none in a pipe or file, NO_COLOR respected.
    colorize: isColorSupported,
    translateTime: 'SYS:HH:MM:ss.l',
    ignore: `pid,hostname,${START_DETAILS_KEY}`,
  });
  const stdout = pino.destination({ dest: 1, sync: true });
  return createLogger({ level: options.level, destination: { write: (line: string) => stdout.write(prettify(line)) } });
}
