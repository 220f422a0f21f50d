/**
 * The list of configuration variables cannot drift: `.env.example` is exactly what
 * CONFIG_VARIABLES renders, and CONFIG_VARIABLES holds exactly the variables Gatehouse reads
 * (recorded by handing loadConfig and the .env chooser an environment that notes every read).
 * The choice of settings file is checked here too; reading it is checked on the real CLI in
 * test/first-run.test.ts.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseEnv } from 'node:util';
import { afterEach, describe, expect, test } from 'vitest';
import { CONFIG_VARIABLES, ConfigError, loadConfig } from '../src/config.js';
import { chooseEnvFile, renderEnvExample } from '../src/env-file.js';

const ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
const example = (): string => fs.readFileSync(path.join(ROOT, '.env.example'), 'utf8');

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});
function tempDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-env-'));
  dirs.push(dir);
  return dir;
}

/** `env` wrapped so that every variable name read from it is added to `reads`. */
function recording(env: Record<string, string>, reads: Set<string>): Record<string, string | undefined> {
  return new Proxy(env, {
    get(target, name) {
      if (typeof name === 'string') reads.add(name);
      return target[name as string];
    },
  });
}

describe('.env.example', () => {
  test('is exactly what CONFIG_VARIABLES renders (regenerate it with npm run env-example)', () => {
    expect(example()).toBe(renderEnvExample());
  });

  test('every line is a comment: copied to .env as it is, it sets nothing', () => {
    for (const line of example().split('\n')) {
      if (line !== '') expect(line).toMatch(/^#/);
    }
    expect(parseEnv(example())).toEqual({});
  });

  test('each variable appears once, with its meaning above it; uncommented, the defaults give the default configuration', () => {
    const assignments = example()
      .split('\n')
      .filter((line) => /^# [A-Z][A-Z0-9_]*=/.test(line))
      .map((line) => line.slice(2));
    expect(assignments.map((line) => line.split('=')[0])).toEqual(CONFIG_VARIABLES.map((variable) => variable.name));
    const uncommented = parseEnv(assignments.join('\n')) as Record<string, string>;
    expect(loadConfig(uncommented)).toEqual(loadConfig({}));
  });
});

describe('CONFIG_VARIABLES', () => {
  test('holds exactly the variables loadConfig and the .env chooser read', () => {
    const reads = new Set<string>();
    const secret = 'x'.repeat(40);
    // Settings that take every branch: each mode, each database, each provider state.
    const settings: Record<string, string>[] = [
      {},
      { NODE_ENV: 'development' },
      { NODE_ENV: 'production', JWT_SECRET: secret, BASE_URL: 'https://auth.example.com', METRICS_PUBLIC: 'true' },
      {
        NODE_ENV: 'production',
        METRICS_TOKEN: 'm'.repeat(16),
        ALLOW_INSECURE_BASE_URL: 'true',
        JWT_SECRET: secret,
        DATABASE_URL: 'postgres://u@h/db',
        REDIS_URL: 'redis://h:6379',
        SMTP_URL: 'smtp://h:25',
        MAIL_DELIVERY: 'worker',
      },
      { DATABASE_URL: 'sqlite::memory:', LOG_FORMAT: 'json', BASE_URL: 'https://auth.example.com', TRUSTED_ORIGINS: 'https://app.example.com' },
      {
        GITHUB_CLIENT_ID: 'id',
        GITHUB_CLIENT_SECRET: 'secret',
        AUTH_SECRET: 'a'.repeat(16),
        ENCRYPTION_KEY_BASE64: Buffer.alloc(32).toString('base64'),
        RATE_LIMIT_LOGIN: '1/1m',
        LOCKOUT_DURATION: '1h',
      },
    ];
    for (const env of settings) loadConfig(recording(env, reads));
    // A bad value of each kind still reads every variable (every problem is collected).
    expect(() => loadConfig(recording({ PORT: 'x', LOG_FORMAT: 'x', DATABASE_URL: 'x', SESSION_COOKIE_NAME: '__Host-x' }, reads))).toThrow(ConfigError);

    const cwd = tempDir();
    chooseEnvFile(recording({}, reads), cwd);
    fs.writeFileSync(path.join(cwd, '.env'), '');
    chooseEnvFile(recording({ NODE_ENV: 'production' }, reads), cwd);
    chooseEnvFile(recording({ ENV_FILE: '.env' }, reads), cwd);

    const listed = CONFIG_VARIABLES.map((variable) => variable.name);
    expect(new Set(listed).size).toBe(listed.length);
    expect([...reads].sort()).toEqual([...listed].sort());
  });

  test('nothing in src/ reads process.env except the command line, which hands it to loadConfig and the .env reader', () => {
    const readers: string[] = [];
    const walk = (dir: string): void => {
      for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
        const file = path.join(dir, entry.name);
        if (entry.isDirectory()) walk(file);
        else if (file.endsWith('.ts')) {
          // Code only: a comment that shows how a host calls loadConfig(process.env) reads nothing.
          const code = fs
            .readFileSync(file, 'utf8')
            .replace(/\/\*[\s\S]*?\*\//g, '')
            .replace(/\/\/.*$/gm, '');
          if (/process\.env/.test(code)) readers.push(path.relative(ROOT, file));
        }
      }
    };
    walk(path.join(ROOT, 'src'));
    expect(readers).toEqual(['src/cli.ts']);
  });
});

describe('chooseEnvFile()', () => {
  test('./.env when present; none when absent', () => {
    const cwd = tempDir();
    expect(chooseEnvFile({}, cwd)).toEqual({ kind: 'none' });
    fs.writeFileSync(path.join(cwd, '.env'), 'PORT=1\n');
    expect(chooseEnvFile({}, cwd)).toEqual({ kind: 'read', file: path.join(cwd, '.env'), explicit: false });
    expect(chooseEnvFile({ NODE_ENV: 'development' }, cwd)).toMatchObject({ kind: 'read' });
  });

  test('production ignores ./.env; ENV_FILE is read in any mode, relative to the working directory', () => {
    const cwd = tempDir();
    fs.writeFileSync(path.join(cwd, '.env'), 'PORT=1\n');
    fs.mkdirSync(path.join(cwd, 'conf'));
    fs.writeFileSync(path.join(cwd, 'conf', 'prod.env'), 'PORT=2\n');
    expect(chooseEnvFile({ NODE_ENV: 'production' }, cwd)).toEqual({ kind: 'ignored', file: path.join(cwd, '.env') });
    expect(chooseEnvFile({ NODE_ENV: 'production', ENV_FILE: 'conf/prod.env' }, cwd)).toEqual({
      kind: 'read',
      file: path.join(cwd, 'conf', 'prod.env'),
      explicit: true,
    });
    expect(chooseEnvFile({ ENV_FILE: ' ' }, cwd)).toMatchObject({ kind: 'read', explicit: false });
  });

  test('an ENV_FILE that does not exist is a configuration error naming ENV_FILE and the path', () => {
    const cwd = tempDir();
    let error: unknown;
    try {
      chooseEnvFile({ ENV_FILE: 'nowhere.env' }, cwd);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).problems).toEqual([`ENV_FILE: no file at ${path.join(cwd, 'nowhere.env')}; it names the settings file to read at start`]);
  });
});
