/**
 * @module The settings toolkit: the shape of a capability's settings declaration and the parsers
 * every `settings.ts` reads its variables with. Each capability declares its own environment
 * variables beside it (`src/passkeys/settings.ts`, `src/outbox/settings.ts`, …; the server's own
 * in `src/server-settings.ts`); `src/config.ts` composes them into the one `Config` and the list
 * `.env.example` is generated from. A settings module imports only this module (never a flow, a
 * route or `config.ts`), so the loader imports every one of them without an import cycle.
 */
import { z } from 'zod';

export type Env = Record<string, string | undefined>;

/** NODE_ENV as the rest of the code sees it ('default': unset or anything else). */
export type Mode = 'production' | 'development' | 'default';

export interface RateLimitRule {
  points: number;
  durationSeconds: number;
}

/** One environment variable, as `.env.example` shows it. */
export interface VariableDeclaration<Name extends string = string> {
  readonly name: Name;
  /** The value that gives its default ('' when unset means something a value cannot say, explained in `meaning`). */
  readonly default: string;
  /** One line of meaning (`.env.example`; docs/configuration.md says the same at more length). */
  readonly meaning: string;
}

/** A rate limit's variable: its documented default is the rule when the variable is unset. */
export interface RateLimitDeclaration<Name extends string = string> extends VariableDeclaration<Name> {
  readonly rule: Readonly<RateLimitRule>;
}

/** What every capability's settings may depend on: the server settings, read first. */
export interface SettingsContext {
  readonly mode: Mode;
  readonly baseUrl: string;
  readonly httpsBaseUrl: boolean;
}

/**
 * Reads the variables of one declaration (`Name`: only the names it declares), and collects
 * every problem so that the start stops once, naming each bad variable.
 */
export interface SettingsReader<Name extends string> {
  /** The value without surrounding blanks; undefined when unset or blank. */
  read(name: Name): string | undefined;
  /**
   * A variable whose name is built from another's value (OIDC_<ID>_ISSUER from OIDC_PROVIDERS),
   * which no declaration can list by name.
   */
  readBuilt(name: string): string | undefined;
  /** Records a problem; the message starts with the variable's name. */
  problem(message: string): void;
  /** A whole number from `min` to `max`; `fallback` when unset (or malformed, with a problem). */
  integer(name: Name, fallback: number, min: number, max: number): number;
  /** true or false; `fallback` when unset (or anything else, with a problem). */
  boolean(name: Name, fallback: boolean): boolean;
  /** A duration in milliseconds (`250ms`, `5s`, `1m`; a bare number is seconds) from `minMs` to `maxMs`, which `range` says for people. */
  durationMs(name: Name, fallbackMs: number, minMs: number, maxMs: number, range: string): number;
  /** An http(s) URL without its trailing slashes; `fallback` when unset (or malformed, with a problem). */
  httpUrl(name: Name, fallback: string): string;
  /** A `<count>/<window>` rule of at most a week; `fallback` when unset (or malformed, with a problem). */
  rateLimit(name: Name, fallback: Readonly<RateLimitRule>): Readonly<RateLimitRule>;
}

/** One capability's settings: its variables, its rate limits, and how they become its slice of the `Config`. */
export interface Settings<Name extends string, Limit extends string, Slice, LimitVariable extends string = string> {
  /** Whose settings (the capability's name). */
  readonly name: string;
  /** In the order `.env.example` shows them, before the rate limits. */
  readonly variables: readonly VariableDeclaration<Name>[];
  /** By their name in `Config.rateLimits`; the loader reads them. */
  readonly rateLimits: Readonly<Record<Limit, RateLimitDeclaration<LimitVariable>>>;
  /** Its slice of the `Config`, nested objects frozen; reports each bad value through `reader`. */
  readonly read: (reader: SettingsReader<Name>, context: SettingsContext) => Slice;
}

/**
 * A capability's settings. Each rate limit is declared with its default as text (`30/15m`),
 * which is both what `.env.example` shows and the rule without the variable.
 */
export function defineSettings<
  const Name extends string = never,
  const Limit extends string = never,
  const LimitVariable extends string = never,
  Slice = Record<never, never>,
>(settings: {
  name: string;
  variables?: readonly VariableDeclaration<Name>[];
  rateLimits?: Readonly<Record<Limit, VariableDeclaration<LimitVariable>>>;
  read?: (reader: SettingsReader<Name>, context: SettingsContext) => Slice;
}): Settings<Name, Limit, Slice, LimitVariable> {
  const rateLimits = {} as Record<Limit, RateLimitDeclaration<LimitVariable>>;
  for (const [limit, declaration] of Object.entries(settings.rateLimits ?? {}) as [Limit, VariableDeclaration<LimitVariable>][]) {
    const rule = parseRateLimitRule(declaration.default);
    if (rule === null) throw new Error(`${declaration.name}: its default "${declaration.default}" is not a <count>/<window> rule`);
    rateLimits[limit] = Object.freeze({ ...declaration, rule: Object.freeze(rule) });
  }
  return Object.freeze({
    name: settings.name,
    variables: Object.freeze([...(settings.variables ?? [])]),
    rateLimits: Object.freeze(rateLimits),
    read: settings.read ?? (() => ({}) as Slice),
  });
}

/**
 * Longest rate limit window or lock. The in-memory store expires keys with setTimeout, which
 * fires at once past 2^31 ms (24.8 days); failures are kept for two lock durations.
 */
export const MAX_LIMIT_WINDOW_SECONDS = 7 * 24 * 3600;

/** Parses `900`, `900s`, `15m` or `1h` into seconds; null when malformed. */
export function parseDurationSeconds(text: string): number | null {
  const match = /^(\d{1,9})\s*([smh]?)$/.exec(text.trim());
  if (!match) return null;
  const value = Number(match[1]);
  const unit = match[2] === 'h' ? 3600 : match[2] === 'm' ? 60 : 1;
  const seconds = value * unit;
  return seconds > 0 ? seconds : null;
}

/** Parses `250ms`, or any duration `parseDurationSeconds` takes (`5`, `5s`, `1m`), into milliseconds; null when malformed. */
export function parseDurationMs(text: string): number | null {
  const millis = /^(\d{1,9})\s*ms$/.exec(text.trim());
  if (millis) return Number(millis[1]) > 0 ? Number(millis[1]) : null;
  const seconds = parseDurationSeconds(text);
  return seconds === null ? null : seconds * 1000;
}

/** Parses `<count>/<window>` such as `10/15m`; null when malformed. */
export function parseRateLimitRule(text: string): RateLimitRule | null {
  const [count, window, extra] = text.split('/');
  if (count === undefined || window === undefined || extra !== undefined) return null;
  if (!/^\d{1,9}$/.test(count.trim())) return null;
  const points = Number(count.trim());
  const durationSeconds = parseDurationSeconds(window);
  if (points < 1 || durationSeconds === null) return null;
  return { points, durationSeconds };
}

/** Whether `text` is an http(s) URL (zod's check, the one every URL variable uses). */
export function isHttpUrl(text: string): boolean {
  return z.url({ protocol: /^https?$/ }).safeParse(text).success;
}

/** The reader of `env` that adds each problem to `problems` (the loader's, one for every declaration). */
export function createSettingsReader(env: Env, problems: string[]): SettingsReader<string> {
  const read = (name: string): string | undefined => {
    const value = env[name];
    return value === undefined || value.trim() === '' ? undefined : value.trim();
  };
  const problem = (message: string): void => {
    problems.push(message);
  };
  return {
    read,
    readBuilt: read,
    problem,
    integer(name, fallback, min, max) {
      const raw = read(name);
      if (raw === undefined) return fallback;
      const parsed = z.coerce.number().int().min(min).max(max).safeParse(raw);
      if (!/^-?\d+$/.test(raw) || !parsed.success) {
        problem(`${name}: expected a whole number from ${min} to ${max}, got "${raw}"`);
        return fallback;
      }
      return parsed.data;
    },
    boolean(name, fallback) {
      const raw = read(name);
      if (raw === undefined) return fallback;
      if (raw !== 'true' && raw !== 'false') {
        problem(`${name}: expected true or false, got "${raw}"`);
        return fallback;
      }
      return raw === 'true';
    },
    durationMs(name, fallbackMs, minMs, maxMs, range) {
      const raw = read(name);
      if (raw === undefined) return fallbackMs;
      const ms = parseDurationMs(raw);
      if (ms !== null && ms >= minMs && ms <= maxMs) return ms;
      problem(`${name}: expected a duration from ${range}, such as 250ms, 5s or 1m (a bare number is seconds), got "${raw}"`);
      return fallbackMs;
    },
    httpUrl(name, fallback) {
      const raw = read(name) ?? fallback;
      if (!isHttpUrl(raw)) {
        problem(`${name}: expected an http(s) URL, got "${raw}"`);
        return fallback;
      }
      return raw.replace(/\/+$/, '');
    },
    rateLimit(name, fallback) {
      const raw = read(name);
      if (raw === undefined) return fallback;
      const rule = parseRateLimitRule(raw);
      if (rule === null) problem(`${name}: expected <count>/<window> such as 10/15m (window in seconds or with s, m, h), got "${raw}"`);
      else if (rule.durationSeconds > MAX_LIMIT_WINDOW_SECONDS) problem(`${name}: the window must be at most 7 days (168h), got "${raw}"`);
      else return rule;
      return fallback;
    },
  };
}
