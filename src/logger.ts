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

/** The longest error message a log line carries; the rest is cut off. */
export const MAX_LOGGED_MESSAGE_CHARS = 200;
/** How many frames of an error's stack a log line carries (where it was thrown, and the callers). */
export const MAX_LOGGED_STACK_FRAMES = 8;
const MAX_LOGGED_FRAME_CHARS = 300;
const MAX_LOGGED_NAME_CHARS = 100;

export interface ErrorSummary {
  type: string;
  code?: string;
  message: string;
  stack?: string[];
  cause?: Omit<ErrorSummary, 'stack' | 'cause'>;
}

function cut(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max)}…`;
}

/**
 * What a log line says of an error (the `err` field): its class, its code, the start of its
 * message and the top of its stack, and the same of its cause, without the stack. Nothing else:
 * pino's own serializer copies every property of the error, and errors carry what no log may
 * hold — a driver's error names the failed query's parameters and the row that clashed, an HTTP
 * client's error its request with headers and cookies. Bounded, so one error is one short line.
 */
export function summarizeError(error: unknown, withStack = true): ErrorSummary {
  // withStack false: a cause, summarised without a stack or a cause of its own.
  if (!(error instanceof Error)) {
    // A thrown non-Error (a string, a plain object) is described by its kind only: an object may be anything.
    return { type: typeof error, message: typeof error === 'string' ? cut(error, MAX_LOGGED_MESSAGE_CHARS) : '(not an Error)' };
  }
  const type = typeof error.name === 'string' && error.name !== '' ? error.name : 'Error';
  const summary: ErrorSummary = { type: cut(type, MAX_LOGGED_NAME_CHARS), message: cut(String(error.message), MAX_LOGGED_MESSAGE_CHARS) };
  const { code } = error as { code?: unknown };
  if (typeof code === 'string' || typeof code === 'number') summary.code = cut(String(code), MAX_LOGGED_NAME_CHARS);
  if (withStack && typeof error.stack === 'string') {
    // The frames only: the stack's first lines repeat the message, which may run long.
    const frames = error.stack.split('\n').filter((line) => /^\s+at /.test(line));
    summary.stack = frames.slice(0, MAX_LOGGED_STACK_FRAMES).map((frame) => cut(frame.trim(), MAX_LOGGED_FRAME_CHARS));
  }
  if (withStack && error.cause !== undefined) summary.cause = summarizeError(error.cause, false);
  return summary;
}

export function createLogger(options: { level: string; destination?: pino.DestinationStream }): Logger {
  const settings = { level: options.level, redact: { paths: REDACTED_PATHS, censor: '[redacted]' }, serializers: { err: summarizeError } };
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
