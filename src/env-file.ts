/**
 * @module Settings kept in a file: `./.env` is read at start when it exists, or the file ENV_FILE
 * names, with Node's own parser (`process.loadEnvFile`). A variable already set in the
 * environment always wins over the file. In production (NODE_ENV=production in the real
 * environment) `./.env` is not read unless ENV_FILE names it: a development file left in a
 * deployment's working directory must not change a production server. The command line calls
 * this before `loadConfig`, which stays the one place that interprets the values.
 *
 * Also renders `.env.example` from CONFIG_VARIABLES (`npm run env-example`).
 */
import fs from 'node:fs';
import path from 'node:path';
import { parseEnv } from 'node:util';
import { CONFIG_VARIABLES, ConfigError, type ConfigVariable } from './config.js';

type Env = Record<string, string | undefined>;

export const DEFAULT_ENV_FILE = '.env';

export type EnvFileOutcome =
  /** No file to read. */
  | { kind: 'none' }
  /** `./.env` exists but production does not read it without ENV_FILE. */
  | { kind: 'ignored'; file: string }
  /** Read: `set` are the names the file gave a value, `kept` the names it also holds that the environment had already set (they keep their value). */
  | { kind: 'read'; file: string; explicit: boolean; set: string[]; kept: string[] };

/** What the variables this module reads are called; both are listed in CONFIG_VARIABLES. */
const ENV_FILE: ConfigVariable = 'ENV_FILE';
const NODE_ENV: ConfigVariable = 'NODE_ENV';

/** The file to read, if any, judged from the real environment only (never from a file). */
export function chooseEnvFile(env: Env, cwd: string): { kind: 'none' } | { kind: 'ignored'; file: string } | { kind: 'read'; file: string; explicit: boolean } {
  const named = env[ENV_FILE]?.trim();
  if (named !== undefined && named !== '') {
    const file = path.resolve(cwd, named);
    if (!fs.existsSync(file)) throw new ConfigError([`ENV_FILE: no file at ${file}; it names the settings file to read at start`]);
    return { kind: 'read', file, explicit: true };
  }
  const file = path.join(cwd, DEFAULT_ENV_FILE);
  if (!fs.existsSync(file)) return { kind: 'none' };
  if (env[NODE_ENV]?.trim() === 'production') return { kind: 'ignored', file };
  return { kind: 'read', file, explicit: false };
}

/**
 * Reads the chosen file into `env` with `load` (the command line passes `process.loadEnvFile`,
 * which never overrides a variable already set, even to an empty value). Only names are
 * reported, never values.
 */
export function readEnvFile(env: Env, cwd: string, load: (file: string) => void): EnvFileOutcome {
  const choice = chooseEnvFile(env, cwd);
  if (choice.kind !== 'read') return choice;
  let names: string[];
  let kept: string[];
  try {
    names = Object.keys(parseEnv(fs.readFileSync(choice.file, 'utf8'))).sort();
    // Judged before the load, which leaves these untouched.
    kept = names.filter((name) => env[name] !== undefined);
    load(choice.file);
  } catch (error) {
    const { code, message } = error as { code?: string; message?: string };
    throw new ConfigError([`${choice.explicit ? 'ENV_FILE' : DEFAULT_ENV_FILE}: cannot read ${choice.file}: ${code ?? message ?? String(error)}`]);
  }
  return { ...choice, set: names.filter((name) => !kept.includes(name)), kept };
}

/** The log line for a file read or ignored; null when there was none. */
export function describeEnvFile(outcome: EnvFileOutcome): { message: string; details: Record<string, string | readonly string[]> } | null {
  if (outcome.kind === 'none') return null;
  if (outcome.kind === 'ignored') {
    return {
      message: `Not reading ${outcome.file}: in production a settings file is read only when ENV_FILE names it`,
      details: { envFile: outcome.file, ignored: 'production' },
    };
  }
  const kept = outcome.kept.length === 0 ? '' : `; already set in the environment, so kept as they were: ${outcome.kept.join(', ')}`;
  // A misspelt name (PROT=3000) would otherwise be silently without effect.
  const known = new Set<string>(CONFIG_VARIABLES.map((variable) => variable.name));
  const unknown = [...outcome.set, ...outcome.kept].filter((name) => !known.has(name));
  const strange = unknown.length === 0 ? '' : `; not Gatehouse variables: ${unknown.join(', ')}`;
  return {
    message: `Read settings from ${outcome.file}: ${outcome.set.length === 0 ? 'none' : outcome.set.join(', ')}${kept}${strange}`,
    details: { envFile: outcome.file, set: outcome.set, kept: outcome.kept, unknown },
  };
}

/** `.env.example`: every variable commented out with its default, under its one-line meaning. */
export function renderEnvExample(): string {
  const header = [
    '# Gatehouse settings: every variable, with its default and what it means.',
    '# Generated from CONFIG_VARIABLES in src/config.ts by `npm run env-example`; do not edit by hand.',
    '#',
    '# Copy this file to .env and uncomment the lines you change: Gatehouse reads ./.env at start.',
    '# A variable already set in the environment wins over the file. In production',
    '# (NODE_ENV=production) ./.env is read only when ENV_FILE names it. An empty value means unset.',
    '# Every variable at length: docs/configuration.md',
  ];
  const entries = CONFIG_VARIABLES.map((variable) => `# ${variable.meaning}\n# ${variable.name}=${variable.default}`);
  return `${header.join('\n')}\n\n${entries.join('\n\n')}\n`;
}
