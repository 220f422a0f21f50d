/**
 * @module The server's own settings: the mode, where it listens, the public origin and who may
 * call it across origins, the proxies it trusts, and its logs. Read before every capability's
 * settings, which may depend on the mode and the origin (`SettingsContext`).
 */
import { defineSettings, isHttpUrl, type Mode, type SettingsReader, type VariableDeclaration } from './settings.js';

export interface ServerSettings {
  mode: Mode;
  /**
   * Emails printed to the console, and (with NODE_ENV=development) tokens in answers: only outside
   * production and while BASE_URL's host is a loopback address, so whoever reads the console or
   * the answers is the developer at that machine. The mailer choice (gatehouse.ts) and the
   * routes' `devMode` (app.ts) both read this one field.
   */
  devConveniences: boolean;
  port: number;
  host: string;
  baseUrl: string;
  /**
   * BASE_URL is https: cookies are Secure and `__Host-` prefixed, and HSTS is sent, in every mode
   * (a TLS-terminating proxy talks plain http to Gatehouse; what counts is what the browser sees).
   */
  httpsBaseUrl: boolean;
  /** TRUSTED_ORIGINS: front ends on other origins that may call the API with credentials (CORS). */
  trustedOrigins: readonly string[];
  logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  /** LOG_FORMAT: only the command line reads it ('auto': pretty on a terminal, JSON otherwise); the library logs JSON. */
  logFormat: 'auto' | 'json' | 'pretty';
  trustProxyHops: number;
}

/** The hosts whose BASE_URL allows development conveniences (`Config.devConveniences`): loopback, by name or address. */
const LOOPBACK_HOSTS: readonly string[] = ['localhost', '127.0.0.1', '[::1]'];

/** Whether `baseUrl`'s host is `localhost`, `127.0.0.1` or `[::1]` (as the URL parser writes them: `http://LOCALHOST`, `http://127.1` count too). */
export function isLoopbackBaseUrl(baseUrl: string): boolean {
  return LOOPBACK_HOSTS.includes(new URL(baseUrl).hostname);
}

/**
 * An origin exactly as a browser sends it in `Origin` (`https://app.example.com`, with a port
 * only when it is not the scheme's default); null for anything else: a path, a query, user
 * info, a wildcard, another scheme.
 */
export function parseOrigin(text: string): string | null {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return null;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return null;
  if (url.username !== '' || url.password !== '' || url.search !== '' || url.hash !== '') return null;
  if (url.pathname !== '/' || !/^https?:\/\/[^/]+\/?$/i.test(text)) return null;
  // The URL parser accepts `*` in a host name; a wildcard is never an origin here.
  if (!/^([a-z0-9-]+\.)*[a-z0-9-]+$|^\[[0-9a-f:.]+\]$/.test(url.hostname)) return null;
  return url.origin;
}

const variables = [
  {
    name: 'NODE_ENV',
    default: '',
    meaning:
      'production: JWT_SECRET, METRICS_TOKEN (or METRICS_PUBLIC=true) and BCRYPT_ROUNDS >= 10 required, nothing secret printed; development: tokens also in responses, only with a localhost, 127.0.0.1 or [::1] BASE_URL; unset: neither',
  },
  { name: 'PORT', default: '3000', meaning: 'port to listen on' },
  { name: 'HOST', default: '127.0.0.1', meaning: 'address to listen on (0.0.0.0: every interface)' },
  {
    name: 'BASE_URL',
    default: '',
    meaning: 'public origin of the pages and links, the one origin that may always change state (unset: http://localhost:$PORT)',
  },
  {
    name: 'TRUSTED_ORIGINS',
    default: '',
    meaning: 'comma-separated origins (https://app.example.com) of front ends that may call the API with credentials (CORS)',
  },
  {
    name: 'ALLOW_INSECURE_BASE_URL',
    default: 'false',
    meaning: 'true lets production run with a plain-http BASE_URL (cookies then not Secure); refused otherwise',
  },
  { name: 'TRUST_PROXY', default: '0', meaning: 'reverse proxies in front whose X-Forwarded-For is trusted (0 to 10; 0: the socket address is the client)' },
  { name: 'LOG_LEVEL', default: 'info', meaning: 'fatal, error, warn, info, debug, trace or silent' },
  { name: 'LOG_FORMAT', default: '', meaning: 'json or pretty (unset: pretty lines on a terminal, JSON lines otherwise)' },
  // Read by src/env-file.ts, before the rest, to choose the settings file.
  {
    name: 'ENV_FILE',
    default: '',
    meaning: 'settings file to read at start instead of ./.env, also in production; taken from the environment only, never from a file',
  },
] as const satisfies readonly VariableDeclaration[];

type ServerVariable = (typeof variables)[number]['name'];

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

/**
 * The server's slice, read before every other declaration: the others depend on the mode and
 * the origin it decides (`SettingsContext`), so the loader calls it first, without a context.
 */
export function readServerSettings(reader: SettingsReader<ServerVariable>): ServerSettings {
  const nodeEnv = reader.read('NODE_ENV');
  const mode: Mode = nodeEnv === 'production' ? 'production' : nodeEnv === 'development' ? 'development' : 'default';
  const port = reader.integer('PORT', 3000, 0, 65535);
  const host = reader.read('HOST') ?? '127.0.0.1';

  let baseUrl = `http://localhost:${port}`;
  const rawBaseUrl = reader.read('BASE_URL');
  if (rawBaseUrl !== undefined) {
    if (!isHttpUrl(rawBaseUrl)) reader.problem(`BASE_URL: expected an http(s) origin such as https://auth.example.com, got "${rawBaseUrl}"`);
    else baseUrl = new URL(rawBaseUrl).origin;
  }
  const loopbackBaseUrl = isLoopbackBaseUrl(baseUrl);
  if (mode === 'development' && !loopbackBaseUrl) {
    reader.problem(
      `NODE_ENV: development prints emails with their links and codes and returns tokens in answers, so it needs a BASE_URL on localhost, 127.0.0.1 or [::1], got BASE_URL "${baseUrl}"; unset NODE_ENV (or set it to production) for any other address`,
    );
  }

  const trustedOrigins: string[] = [];
  for (const entry of (reader.read('TRUSTED_ORIGINS') ?? '').split(',').map((part) => part.trim())) {
    if (entry === '') continue;
    const origin = parseOrigin(entry);
    if (origin === null) {
      reader.problem(`TRUSTED_ORIGINS: expected comma-separated origins such as https://app.example.com (scheme, host and port only; never *), got "${entry}"`);
    } else if (!trustedOrigins.includes(origin)) {
      trustedOrigins.push(origin);
    }
  }

  const httpsBaseUrl = baseUrl.startsWith('https://');
  const allowInsecure = reader.boolean('ALLOW_INSECURE_BASE_URL', false);
  if (mode === 'production' && !httpsBaseUrl && !allowInsecure) {
    reader.problem(
      `BASE_URL: production needs the https:// address people use (cookies are Secure only then), got "${baseUrl}"; behind a TLS-terminating proxy set it to the proxy's https address, or set ALLOW_INSECURE_BASE_URL=true to run over plain http`,
    );
  }

  const trustProxyHops = reader.integer('TRUST_PROXY', 0, 0, 10);
  const rawLogLevel = reader.read('LOG_LEVEL') ?? 'info';
  const logLevel = LOG_LEVELS.find((level) => level === rawLogLevel);
  if (logLevel === undefined) reader.problem(`LOG_LEVEL: expected one of ${LOG_LEVELS.join(', ')}`);
  const rawLogFormat = reader.read('LOG_FORMAT');
  if (rawLogFormat !== undefined && rawLogFormat !== 'json' && rawLogFormat !== 'pretty') {
    reader.problem(`LOG_FORMAT: expected json or pretty (unset: pretty on a terminal, JSON otherwise), got "${rawLogFormat}"`);
  }
  const logFormat = rawLogFormat === 'json' || rawLogFormat === 'pretty' ? rawLogFormat : 'auto';

  return {
    mode,
    devConveniences: mode !== 'production' && loopbackBaseUrl,
    port,
    host,
    baseUrl,
    httpsBaseUrl,
    trustedOrigins: Object.freeze(trustedOrigins),
    logLevel: logLevel ?? 'info',
    logFormat,
    trustProxyHops,
  };
}

export const serverSettings = defineSettings({
  name: 'server',
  variables,
  read: readServerSettings,
});
