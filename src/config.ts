/**
 * @module Configuration: one typed, validated, frozen object built from the environment once,
 * at start. Nothing else reads `process.env`. A bad value stops the start with a message that
 * names the variable and the form it expects (DESIGN §3).
 */
import path from 'node:path';
import { z } from 'zod';

export type RateLimitName =
  | 'register'
  | 'login'
  | 'passwordResetRequest'
  | 'passwordResetConfirm'
  | 'verifyEmail'
  | 'resendVerification'
  | 'resendVerificationDaily'
  | 'oauthCallback'
  | 'securityNotice'
  | 'emailChange'
  | 'mfaVerify'
  | 'emailSignIn'
  | 'passkeyLogin'
  | 'reauthenticate'
  | 'emailSignInCodeDaily'
  | 'admin'
  | 'metrics';

export interface RateLimitRule {
  points: number;
  durationSeconds: number;
}

export type DatabaseTarget = { kind: 'sqlite'; filename: string } | { kind: 'postgres'; connectionString: string };

export interface GitHubProviderConfig {
  clientId: string;
  clientSecret: string;
  authUrl: string;
  apiUrl: string;
}

/** Providers that need only OIDC_<ID>_CLIENT_ID and _CLIENT_SECRET (their issuer can still be overridden). */
export const OIDC_PRESETS: Readonly<Record<string, { name: string; issuer: string }>> = Object.freeze({
  google: { name: 'Google', issuer: 'https://accounts.google.com' },
  gitlab: { name: 'GitLab', issuer: 'https://gitlab.com' },
  // Microsoft's multi-tenant issuer: its discovery document names `{tenantid}` in place of the
  // tenant, and each ID token carries its own tenant's issuer (openid-client checks it against `tid`).
  microsoft: { name: 'Microsoft', issuer: 'https://login.microsoftonline.com/common/v2.0' },
});

/** The requested scopes when OIDC_<ID>_SCOPES is unset. */
export const DEFAULT_OIDC_SCOPES: readonly string[] = Object.freeze(['openid', 'email', 'profile']);

export interface OidcProviderConfig {
  /** The Issuer Identifier; discovery reads `<issuer>/.well-known/openid-configuration`. */
  issuer: string;
  clientId: string;
  clientSecret: string;
  scopes: readonly string[];
  /**
   * OIDC_<ID>_TRUST_EMAIL: whether the provider's `email_verified` is taken as a proof of the
   * mailbox (links into the account of that address, and gives a new account its address).
   * Default true for a preset at its own host, false for any other issuer.
   */
  trustEmail: boolean;
}

/** One id of OIDC_PROVIDERS and what its OIDC_<ID>_* variables say. */
export interface OidcProviderSetting {
  /** The path segment of /api/auth/oauth/<id> and the `provider` of its linked accounts. */
  id: string;
  /** For people: the button reads "Sign in with <name>". */
  name: string;
  /** null when one of its own variables is missing or malformed. */
  config: Readonly<OidcProviderConfig> | null;
  /** Empty when the provider can be used; else each missing or malformed variable, AUTH_SECRET and ENCRYPTION_KEY_BASE64 included. */
  problems: readonly string[];
}

export interface MailConfig {
  /** smtp:// or smtps:// URL of the server that delivers queued emails; null: none configured. */
  smtpUrl: string | null;
  /**
   * 'required': an smtp:// server must upgrade with STARTTLS and present a certificate that
   * verifies, or nothing is sent (no downgrade to plain text). 'off': plain SMTP, chosen
   * explicitly (a relay on loopback). smtps:// is TLS from the first byte either way.
   */
  smtpTls: 'required' | 'off';
  from: string;
  appName: string;
  /** Attempts before a queued email is marked dead. */
  maxAttempts: number;
  /** 'server': each server process sends; 'worker': only `gatehouse mail` does. */
  delivery: 'server' | 'worker';
}

/** Have I Been Pwned's k-anonymity range API (credentials/breach-check.ts). */
const HIBP_RANGE_URL = 'https://api.pwnedpasswords.com/range/';

export type BreachCheckSetting = { kind: 'off' } | { kind: 'hibp'; rangeUrl: string };

export interface Config {
  mode: 'production' | 'development' | 'default';
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
  database: DatabaseTarget;
  /** Folder for local state: the SQLite file and the generated development JWT secret. */
  dataDir: string;
  redisUrl: string | null;
  /** Prefix of every Redis key, so several deployments can share one Redis. */
  redisKeyPrefix: string;
  /** REDIS_TIMEOUT: past it a limiter call is answered from memory and Redis is probed off the request path. */
  redisTimeoutMs: number;
  /** DATABASE_QUERY_TIMEOUT: PostgreSQL's statement_timeout, and the client's bound on a connection that does not answer. */
  databaseQueryTimeoutMs: number;
  /** null only outside production, until the server fills it from the data folder. */
  jwtSecret: string | null;
  sessionExpiresInSeconds: number;
  /**
   * SESSION_IDLE_TIMEOUT: a session not seen for longer is refused; null: off. Checked against the
   * `lastSeenAt` the session check already loads, refreshed at most once a minute, so a session is
   * refused only once idle for longer than this plus that minute (session/flow.ts).
   */
  sessionIdleTimeoutSeconds: number | null;
  sessionCookieName: string;
  bcryptRounds: number;
  /** PASSWORD_BREACH_CHECK: off, or Have I Been Pwned's range API at `rangeUrl` (credentials/breach-check.ts). */
  passwordBreachCheck: Readonly<BreachCheckSetting>;
  migrateOnStart: boolean;
  logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  /** LOG_FORMAT: only the command line reads it ('auto': pretty on a terminal, JSON otherwise); the library logs JSON. */
  logFormat: 'auto' | 'json' | 'pretty';
  trustProxyHops: number;
  rateLimits: Readonly<Record<RateLimitName, RateLimitRule>>;
  /** AUDIT_RETENTION_DAYS: audit rows older than this are deleted by the hourly sweep. */
  auditRetentionDays: number;
  lockout: { maxFailures: number; durationSeconds: number };
  loginPageUrl: string;
  defaultReturnTo: string;
  /** EMAIL_SIGN_IN_SIGNUP: an unknown address may create its account by signing in by email. */
  emailSignInSignup: boolean;
  /** METRICS_TOKEN: the bearer token GET /metrics requires; null: /metrics is open (docs/metrics.md). */
  metricsToken: string | null;
  /** METRICS_PUBLIC=true: production may run with /metrics open (no METRICS_TOKEN), on purpose. */
  metricsPublic: boolean;
  /** The provider flow's settings; each missing or malformed one is named in `oauthProblems`. */
  github: GitHubProviderConfig | null;
  authSecret: string | null;
  encryptionKeys: readonly Buffer[];
  /**
   * Outside production without ENCRYPTION_KEY_BASE64: a key generated once into the data folder
   * (dev-secret.ts), which seals two-factor secrets only; null otherwise.
   */
  generatedEncryptionKey: Buffer | null;
  oauthProblems: readonly string[];
  /** The provider flow's variables that are not set at all (all four: nobody tried to turn it on). */
  oauthUnset: readonly string[];
  /** OIDC_PROVIDERS, in the order listed (the login page's order). */
  oidcProviders: readonly Readonly<OidcProviderSetting>[];
  mail: Readonly<MailConfig>;
  /** ADMIN_API_KEY: the bearer key of /api/admin/* (at least 32 characters); null: the admin API is off (404). */
  adminApiKey: string | null;
}

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

/**
 * Every environment variable Gatehouse reads, with the value that gives its default ('' when
 * unset means something a value cannot say, explained in `meaning`) and one line of meaning.
 * `.env.example` is generated from this list (`npm run env-example`), `loadConfig` can read only
 * the names listed here (its `read` takes a `ConfigVariable`), and test/env-file.test.ts checks
 * that the list holds exactly the variables read, so the three cannot drift apart.
 * docs/configuration.md says the same at more length.
 */
export const CONFIG_VARIABLES = [
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
  { name: 'DATABASE_URL', default: 'sqlite:./data/gatehouse.db', meaning: 'postgres://user:password@host:5432/db, sqlite:<path> or sqlite::memory:' },
  {
    name: 'DATABASE_QUERY_TIMEOUT',
    default: '5s',
    meaning: 'PostgreSQL: longest a statement may run, and wait for an answer, before the request gets 503 (250ms, 5s or 1m; a bare number is seconds)',
  },
  { name: 'MIGRATE_ON_START', default: 'true', meaning: 'apply pending database migrations when the server starts (true or false)' },
  {
    name: 'JWT_SECRET',
    default: '',
    meaning: 'signs session JWTs, at least 32 characters; required in production, otherwise generated once into <data folder>/jwt-secret',
  },
  { name: 'SESSION_EXPIRES_IN', default: '86400', meaning: 'session lifetime in seconds (60 to 31536000)' },
  {
    name: 'SESSION_IDLE_TIMEOUT',
    default: '',
    meaning: 'a session not used for this long is refused, as 30m or 8h (1m to 365 days; up to a minute longer in effect); unset or 0: no idle timeout',
  },
  {
    name: 'SESSION_COOKIE_NAME',
    default: '',
    meaning: 'name of the session cookie (unset: __Host-gatehouse_session with an https BASE_URL, else gatehouse_session; production: must start with __Host-)',
  },
  {
    name: 'ALLOW_INSECURE_BASE_URL',
    default: 'false',
    meaning: 'true lets production run with a plain-http BASE_URL (cookies then not Secure); refused otherwise',
  },
  { name: 'BCRYPT_ROUNDS', default: '10', meaning: 'bcrypt cost (4 to 15; at least 10 in production)' },
  {
    name: 'PASSWORD_BREACH_CHECK',
    default: 'off',
    meaning: "hibp: also refuse new passwords found in Have I Been Pwned's breach corpus (only 5 hex characters of a SHA-1 leave the server; fails open)",
  },
  {
    name: 'PASSWORD_BREACH_CHECK_URL',
    default: 'https://api.pwnedpasswords.com/range/',
    meaning: 'the k-anonymity range API that PASSWORD_BREACH_CHECK=hibp asks',
  },
  { name: 'APP_NAME', default: 'Gatehouse', meaning: 'product name in email subjects and bodies' },
  {
    name: 'SMTP_URL',
    default: '',
    meaning:
      'smtp://user:password@host:587 or smtps://…:465 that delivers emails (unset: printed to the console outside production with a localhost, 127.0.0.1 or [::1] BASE_URL, else kept queued)',
  },
  {
    name: 'SMTP_TLS',
    default: 'required',
    meaning: 'required: smtp:// must upgrade with STARTTLS to a verified certificate, or nothing is sent; off: plain SMTP (a relay on loopback)',
  },
  { name: 'MAIL_FROM', default: '', meaning: 'sender address of emails (unset: "<APP_NAME>" <no-reply@<BASE_URL host>>)' },
  { name: 'MAIL_MAX_ATTEMPTS', default: '5', meaning: 'attempts before a queued email is marked dead (1 to 100)' },
  { name: 'MAIL_DELIVERY', default: 'server', meaning: 'server: every server process sends emails; worker: only `gatehouse mail` processes send them' },
  { name: 'LOG_LEVEL', default: 'info', meaning: 'fatal, error, warn, info, debug, trace or silent' },
  { name: 'LOG_FORMAT', default: '', meaning: 'json or pretty (unset: pretty lines on a terminal, JSON lines otherwise)' },
  {
    name: 'ENV_FILE',
    default: '',
    meaning: 'settings file to read at start instead of ./.env, also in production; taken from the environment only, never from a file',
  },
  {
    name: 'RATE_LIMIT_REGISTER',
    default: '5/15m',
    meaning: 'registrations per client IP, as <count>/<window> (window in seconds or with s, m, h; at most 7 days)',
  },
  { name: 'RATE_LIMIT_LOGIN', default: '10/15m', meaning: 'login attempts per client IP, as <count>/<window>' },
  { name: 'RATE_LIMIT_PASSWORD_RESET_REQUEST', default: '5/15m', meaning: 'password reset requests per client IP, and separately per email' },
  { name: 'RATE_LIMIT_PASSWORD_RESET_CONFIRM', default: '10/15m', meaning: 'password reset confirmations per client IP' },
  { name: 'RATE_LIMIT_VERIFY_EMAIL', default: '10/15m', meaning: 'email verifications per client IP' },
  { name: 'RATE_LIMIT_RESEND_VERIFICATION', default: '3/15m', meaning: 'verification email resends per client IP, and separately per user' },
  { name: 'RATE_LIMIT_RESEND_VERIFICATION_DAILY', default: '10/24h', meaning: 'verification email resends per user per day, so no mailbox can be flooded' },
  {
    name: 'RATE_LIMIT_SECURITY_NOTICE',
    default: '10/24h',
    meaning: 'security notice emails (account locked, password changed, provider linked) per user; past it a notice is dropped, not queued',
  },
  { name: 'RATE_LIMIT_EMAIL_CHANGE', default: '5/1h', meaning: 'email change requests per user, and separately per client IP (each mails a link)' },
  {
    name: 'RATE_LIMIT_MFA_VERIFY',
    default: '10/15m',
    meaning: 'second-factor code checks (POST /api/auth/2fa/verify) per client IP; wrong codes also count toward the login lock',
  },
  {
    name: 'RATE_LIMIT_EMAIL_SIGN_IN',
    default: '5/15m',
    meaning: 'sign-in link and code requests per client IP, and separately per email (each mails a link and a code)',
  },
  {
    name: 'RATE_LIMIT_PASSKEY_LOGIN',
    default: '30/15m',
    meaning:
      'passkey sign-in steps per client IP: each options request and each verification counts (a sign-in is two; /login asks for options once per visit)',
  },
  {
    name: 'RATE_LIMIT_REAUTHENTICATE',
    default: '10/15m',
    meaning:
      'checks of a current password (password and email change, 2FA and passkey changes, unlinking, account deletion) per user, and separately per client IP; right passwords count too',
  },
  {
    name: 'RATE_LIMIT_EMAIL_SIGN_IN_CODE_DAILY',
    default: '50/24h',
    meaning: "wrong email sign-in codes per address per day; past it that address's codes are refused until the window ends (its links still work)",
  },
  {
    name: 'EMAIL_SIGN_IN_SIGNUP',
    default: 'false',
    meaning: 'true: an email sign-in request for an unknown address mails it too, and its first use creates the account (no password)',
  },
  {
    name: 'ADMIN_API_KEY',
    default: '',
    meaning: 'turns on the admin API /api/admin/* for this bearer key, at least 32 characters (openssl rand -base64 32); unset: every /api/admin/* answers 404',
  },
  {
    name: 'RATE_LIMIT_ADMIN',
    default: '100/1m',
    meaning: 'admin API requests per client IP, counted before the key is checked (a wrong key counts too)',
  },
  {
    name: 'METRICS_TOKEN',
    default: '',
    meaning: 'bearer token that GET /metrics requires, at least 16 characters (unset: /metrics is open; production then needs METRICS_PUBLIC=true)',
  },
  {
    name: 'METRICS_PUBLIC',
    default: 'false',
    meaning: 'true lets production run with /metrics open to anyone who reaches the server (no METRICS_TOKEN); refused otherwise',
  },
  {
    name: 'RATE_LIMIT_METRICS',
    default: '60/1m',
    meaning: 'GET /metrics requests per client IP and per instance (in its memory), counted before the token is checked (a wrong token counts too)',
  },
  { name: 'RATE_LIMIT_OAUTH_CALLBACK', default: '20/15m', meaning: 'sign-in provider callbacks per client IP (a refused one lands on the login page)' },
  { name: 'LOCKOUT_MAX_FAILURES', default: '5', meaning: 'failed logins (by email, and by IP) that lock sign-in (1 to 1000)' },
  { name: 'LOCKOUT_DURATION', default: '15m', meaning: 'how long a login lock lasts: 900, 15m or 1h (at most 7 days)' },
  { name: 'AUDIT_RETENTION_DAYS', default: '365', meaning: 'days audit rows are kept; older ones are deleted by the hourly sweep (1 to 36500)' },
  { name: 'TRUST_PROXY', default: '0', meaning: 'reverse proxies in front whose X-Forwarded-For is trusted (0 to 10; 0: the socket address is the client)' },
  {
    name: 'REDIS_URL',
    default: '',
    meaning: "redis:// or rediss:// where rate limits and locks are counted (unset: in PostgreSQL when DATABASE_URL is, else in this process's memory)",
  },
  { name: 'REDIS_KEY_PREFIX', default: 'gatehouse', meaning: 'prefix of every Redis key, so deployments can share a Redis' },
  {
    name: 'REDIS_TIMEOUT',
    default: '250ms',
    meaning: "longest a rate limit or lock waits for Redis before this instance's memory answers instead (250ms or 1s; a bare number is seconds)",
  },
  { name: 'GITHUB_CLIENT_ID', default: '', meaning: "Sign in with GitHub: the OAuth app's client id (its callback: $BASE_URL/api/auth/callback/github)" },
  { name: 'GITHUB_CLIENT_SECRET', default: '', meaning: "Sign in with GitHub: the OAuth app's client secret" },
  { name: 'GITHUB_AUTH_URL', default: 'https://github.com/login/oauth', meaning: "GitHub's OAuth base URL (change it for GitHub Enterprise)" },
  { name: 'GITHUB_API_URL', default: 'https://api.github.com', meaning: "GitHub's REST API base URL" },
  {
    name: 'OIDC_PROVIDERS',
    default: '',
    meaning:
      'Sign in with OpenID Connect: comma-separated provider ids (google, gitlab, microsoft or one of your own); each reads OIDC_<ID>_ISSUER (presets: not needed), _CLIENT_ID, _CLIENT_SECRET, and optionally _NAME, _SCOPES and _TRUST_EMAIL (true: its verified email links into the account of that address; default true for the presets at their own hosts, false for any other issuer) (callback: $BASE_URL/api/auth/callback/<id>)',
  },
  {
    name: 'AUTH_SECRET',
    default: '',
    meaning: 'signs the short-lived provider sign-in cookie and encrypts its PKCE verifier, at least 16 characters (every sign-in provider needs it)',
  },
  {
    name: 'ENCRYPTION_KEY_BASE64',
    default: '',
    meaning: 'encrypts stored provider tokens: base64 of 32 random bytes (openssl rand -base64 32); older keys after a comma only decrypt',
  },
  { name: 'LOGIN_PAGE_URL', default: '/login', meaning: 'path that provider sign-in errors land on' },
  { name: 'DEFAULT_RETURN_TO', default: '/dashboard', meaning: 'path a provider sign-in lands on without an acceptable return_to' },
] as const satisfies readonly { name: string; default: string; meaning: string }[];

export type ConfigVariable = (typeof CONFIG_VARIABLES)[number]['name'];

/** The variables "Sign in with GitHub" needs, all four (docs/configuration.md). */
export const GITHUB_SIGN_IN_VARIABLES = [
  'GITHUB_CLIENT_ID',
  'GITHUB_CLIENT_SECRET',
  'AUTH_SECRET',
  'ENCRYPTION_KEY_BASE64',
] as const satisfies readonly ConfigVariable[];

/** Documented defaults; the spec fixes register and login, the rest are ours (docs/configuration.md). */
export const DEFAULT_RATE_LIMITS: Readonly<Record<RateLimitName, RateLimitRule>> = Object.freeze({
  register: { points: 5, durationSeconds: 15 * 60 },
  login: { points: 10, durationSeconds: 15 * 60 },
  passwordResetRequest: { points: 5, durationSeconds: 15 * 60 },
  passwordResetConfirm: { points: 10, durationSeconds: 15 * 60 },
  verifyEmail: { points: 10, durationSeconds: 15 * 60 },
  resendVerification: { points: 3, durationSeconds: 15 * 60 },
  // A signed-in user could otherwise have 3 emails sent to their address every 15 minutes, all day.
  resendVerificationDaily: { points: 10, durationSeconds: 24 * 3600 },
  oauthCallback: { points: 20, durationSeconds: 15 * 60 },
  // Notices can be set off by someone else (wrong passwords lock an account): a day's cap keeps
  // them from flooding the owner's mailbox, and leaves room for every real event of a day.
  securityNotice: { points: 10, durationSeconds: 24 * 3600 },
  // Each request mails a link to an address of the requester's choosing.
  emailChange: { points: 5, durationSeconds: 3600 },
  // Codes are also counted by the login lock of the email; this bounds what one address tries.
  mfaVerify: { points: 10, durationSeconds: 15 * 60 },
  // Each request mails a link and a code; per IP and per address, like the reset request.
  emailSignIn: { points: 5, durationSeconds: 15 * 60 },
  // A passkey sign-in is two requests (options, verify), and /login asks for options on each
  // visit for the browser's autofill: room for a shared office address, not for a flood.
  passkeyLogin: { points: 30, durationSeconds: 15 * 60 },
  // Each check of a current password is a bcrypt verification on the login hash pool: a signed-in
  // person, right password or wrong, must not be able to keep that pool busy for everyone.
  reauthenticate: { points: 10, durationSeconds: 15 * 60 },
  // The login lock ends after its duration; a day's cap on wrong codes bounds what a patient
  // guesser tries against one address (NIST SP 800-63B bounds consecutive failures).
  emailSignInCodeDaily: { points: 50, durationSeconds: 24 * 3600 },
  // Every admin request, counted before the key is compared: a wrong key is refused as cheaply as
  // a right one is served, and guessing is bounded (a 32-character key is out of reach anyway).
  admin: { points: 100, durationSeconds: 60 },
  // Every scrape, counted before the token and in each instance's memory (gatehouse.ts): each one
  // reads the outbox and renders every metric, so an open /metrics must not be a cheap way to load
  // the database. A Prometheus pair scraping every 15 s asks each instance 8 times a minute.
  metrics: { points: 60, durationSeconds: 60 },
});

/**
 * Longest rate limit window or lock. The in-memory store expires keys with setTimeout, which
 * fires at once past 2^31 ms (24.8 days); failures are kept for two lock durations.
 */
const MAX_LIMIT_WINDOW_SECONDS = 7 * 24 * 3600;

const RATE_LIMIT_VARIABLES: Record<RateLimitName, ConfigVariable> = {
  register: 'RATE_LIMIT_REGISTER',
  login: 'RATE_LIMIT_LOGIN',
  passwordResetRequest: 'RATE_LIMIT_PASSWORD_RESET_REQUEST',
  passwordResetConfirm: 'RATE_LIMIT_PASSWORD_RESET_CONFIRM',
  verifyEmail: 'RATE_LIMIT_VERIFY_EMAIL',
  resendVerification: 'RATE_LIMIT_RESEND_VERIFICATION',
  resendVerificationDaily: 'RATE_LIMIT_RESEND_VERIFICATION_DAILY',
  oauthCallback: 'RATE_LIMIT_OAUTH_CALLBACK',
  securityNotice: 'RATE_LIMIT_SECURITY_NOTICE',
  emailChange: 'RATE_LIMIT_EMAIL_CHANGE',
  mfaVerify: 'RATE_LIMIT_MFA_VERIFY',
  emailSignIn: 'RATE_LIMIT_EMAIL_SIGN_IN',
  passkeyLogin: 'RATE_LIMIT_PASSKEY_LOGIN',
  reauthenticate: 'RATE_LIMIT_REAUTHENTICATE',
  emailSignInCodeDaily: 'RATE_LIMIT_EMAIL_SIGN_IN_CODE_DAILY',
  admin: 'RATE_LIMIT_ADMIN',
  metrics: 'RATE_LIMIT_METRICS',
};

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

/**
 * The configuration once the server is bound. With PORT=0 the system picks the port; without
 * BASE_URL the links, the allowed origin and the OAuth callback must name that port, not 0.
 */
export function withBoundPort(config: Readonly<Config>, boundPort: number): Readonly<Config> {
  // `http://localhost:0` is what an unset BASE_URL gives with PORT=0, and no browser can reach it.
  if (config.port !== 0 || config.baseUrl !== 'http://localhost:0') return config;
  return Object.freeze({ ...config, port: boundPort, baseUrl: `http://localhost:${boundPort}` });
}

/** The hosts whose BASE_URL allows development conveniences (`Config.devConveniences`): loopback, by name or address. */
const LOOPBACK_HOSTS: readonly string[] = ['localhost', '127.0.0.1', '[::1]'];

/** Whether `baseUrl`'s host is `localhost`, `127.0.0.1` or `[::1]` (as the URL parser writes them: `http://LOCALHOST`, `http://127.1` count too). */
export function isLoopbackBaseUrl(baseUrl: string): boolean {
  return LOOPBACK_HOSTS.includes(new URL(baseUrl).hostname);
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

type Env = Record<string, string | undefined>;

/** OIDC_PROVIDERS ids: they become a path segment, a column value (32 characters) and part of variable names. */
const OIDC_PROVIDER_ID = /^[a-z][a-z0-9_]{0,31}$/;
/** A scope token (RFC 6749 §3.3). */
const SCOPE_TOKEN = /^[\x21\x23-\x5b\x5d-\x7e]+$/;

/**
 * OIDC_PROVIDERS and each id's OIDC_<ID>_* variables. A malformed list stops the start (there is
 * no provider to answer for it); a provider's own missing or malformed variable only turns that
 * provider off, like GitHub's: its routes answer 503 naming the variable, the rest runs (DESIGN §3).
 * The per-id names are built from the list, so they are read here and not through `read`, which
 * knows only the fixed names of CONFIG_VARIABLES.
 */
function readOidcProviders(env: Env, mode: Config['mode'], problems: string[], sharedProblems: readonly string[]): OidcProviderSetting[] {
  const value = (name: string): string | undefined => {
    const raw = env[name];
    return raw === undefined || raw.trim() === '' ? undefined : raw.trim();
  };
  const providers: OidcProviderSetting[] = [];
  for (const id of (value('OIDC_PROVIDERS') ?? '').split(',').map((part) => part.trim())) {
    if (id === '') continue;
    if (!OIDC_PROVIDER_ID.test(id)) {
      problems.push(`OIDC_PROVIDERS: expected comma-separated ids of lowercase letters, digits and _ (at most 32, starting with a letter), got "${id}"`);
      continue;
    }
    if (id === 'github') {
      problems.push('OIDC_PROVIDERS: "github" is the built-in GitHub provider (GITHUB_CLIENT_ID, GITHUB_CLIENT_SECRET); choose another id');
      continue;
    }
    if (providers.some((provider) => provider.id === id)) {
      problems.push(`OIDC_PROVIDERS: "${id}" is listed twice`);
      continue;
    }
    const prefix = `OIDC_${id.toUpperCase()}_`;
    const preset = OIDC_PRESETS[id];
    const own: string[] = [];

    const rawIssuer = value(`${prefix}ISSUER`) ?? preset?.issuer;
    let issuer: string | null = null;
    if (rawIssuer === undefined) {
      own.push(`${prefix}ISSUER must be set (the provider's issuer URL, such as https://idp.example.com)`);
    } else if (!z.url({ protocol: /^https?$/ }).safeParse(rawIssuer).success || /[?#]/.test(rawIssuer)) {
      own.push(`${prefix}ISSUER must be an http(s) URL without query or fragment, got "${rawIssuer}"`);
    } else if (mode === 'production' && !rawIssuer.startsWith('https://')) {
      own.push(`${prefix}ISSUER must be an https:// URL in production (plain http only outside production), got "${rawIssuer}"`);
    } else {
      issuer = rawIssuer;
    }
    const clientId = value(`${prefix}CLIENT_ID`) ?? null;
    if (clientId === null) own.push(`${prefix}CLIENT_ID must be set`);
    const clientSecret = value(`${prefix}CLIENT_SECRET`) ?? null;
    if (clientSecret === null) own.push(`${prefix}CLIENT_SECRET must be set`);

    const name = value(`${prefix}NAME`) ?? preset?.name ?? id;
    // eslint-disable-next-line no-control-regex -- finding control characters is the point
    if (name.length > 40 || /[\u0000-\u001f\u007f<>"]/.test(name)) {
      own.push(`${prefix}NAME must be a plain label of at most 40 characters, without quotes, angle brackets or line breaks`);
    }
    const rawScopes = value(`${prefix}SCOPES`);
    const scopes = rawScopes === undefined ? DEFAULT_OIDC_SCOPES : [...new Set(rawScopes.split(/[\s,]+/).filter((scope) => scope !== ''))];
    if (!scopes.every((scope) => SCOPE_TOKEN.test(scope)) || !scopes.includes('openid')) {
      own.push(`${prefix}SCOPES must be space-separated scopes that include openid, such as "openid email profile", got "${rawScopes}"`);
    }

    // A preset's word on an address is trusted only at the preset's own host: a self-managed
    // GitLab's `email_verified` is whatever its administrators configured.
    const rawTrustEmail = value(`${prefix}TRUST_EMAIL`);
    if (rawTrustEmail !== undefined && rawTrustEmail !== 'true' && rawTrustEmail !== 'false') {
      own.push(`${prefix}TRUST_EMAIL must be true or false, got "${rawTrustEmail}"`);
    }
    const atPresetHost = preset !== undefined && issuer !== null && new URL(issuer).host === new URL(preset.issuer).host;
    const trustEmail = rawTrustEmail === undefined ? atPresetHost : rawTrustEmail === 'true';

    providers.push({
      id,
      name,
      config:
        issuer !== null && clientId !== null && clientSecret !== null && own.length === 0
          ? Object.freeze({ issuer, clientId, clientSecret, scopes: Object.freeze([...scopes]), trustEmail })
          : null,
      problems: Object.freeze([...own, ...sharedProblems]),
    });
  }
  return providers;
}

/** Reads the environment once; throws ConfigError naming every bad variable. */
export function loadConfig(env: Env): Readonly<Config> {
  const problems: string[] = [];
  const read = (name: ConfigVariable): string | undefined => {
    const value = env[name];
    return value === undefined || value.trim() === '' ? undefined : value.trim();
  };
  const integer = (name: ConfigVariable, fallback: number, min: number, max: number): number => {
    const raw = read(name);
    if (raw === undefined) return fallback;
    const parsed = z.coerce.number().int().min(min).max(max).safeParse(raw);
    if (!/^-?\d+$/.test(raw) || !parsed.success) {
      problems.push(`${name}: expected a whole number from ${min} to ${max}, got "${raw}"`);
      return fallback;
    }
    return parsed.data;
  };

  const nodeEnv = read('NODE_ENV');
  const mode: Config['mode'] = nodeEnv === 'production' ? 'production' : nodeEnv === 'development' ? 'development' : 'default';

  const port = integer('PORT', 3000, 0, 65535);
  const host = read('HOST') ?? '127.0.0.1';

  let baseUrl = `http://localhost:${port}`;
  const rawBaseUrl = read('BASE_URL');
  if (rawBaseUrl !== undefined) {
    const parsed = z.url({ protocol: /^https?$/ }).safeParse(rawBaseUrl);
    if (!parsed.success) problems.push(`BASE_URL: expected an http(s) origin such as https://auth.example.com, got "${rawBaseUrl}"`);
    else baseUrl = new URL(parsed.data).origin;
  }
  const loopbackBaseUrl = isLoopbackBaseUrl(baseUrl);
  if (mode === 'development' && !loopbackBaseUrl) {
    problems.push(
      `NODE_ENV: development prints emails with their links and codes and returns tokens in answers, so it needs a BASE_URL on localhost, 127.0.0.1 or [::1], got BASE_URL "${baseUrl}"; unset NODE_ENV (or set it to production) for any other address`,
    );
  }
  const devConveniences = mode !== 'production' && loopbackBaseUrl;

  const trustedOrigins: string[] = [];
  for (const entry of (read('TRUSTED_ORIGINS') ?? '').split(',').map((part) => part.trim())) {
    if (entry === '') continue;
    const origin = parseOrigin(entry);
    if (origin === null) {
      problems.push(`TRUSTED_ORIGINS: expected comma-separated origins such as https://app.example.com (scheme, host and port only; never *), got "${entry}"`);
    } else if (!trustedOrigins.includes(origin)) {
      trustedOrigins.push(origin);
    }
  }

  let database: DatabaseTarget = { kind: 'sqlite', filename: './data/gatehouse.db' };
  const rawDatabaseUrl = read('DATABASE_URL');
  if (rawDatabaseUrl !== undefined) {
    if (/^postgres(ql)?:\/\//.test(rawDatabaseUrl)) {
      database = { kind: 'postgres', connectionString: rawDatabaseUrl };
    } else if (rawDatabaseUrl.startsWith('sqlite:') && rawDatabaseUrl.length > 'sqlite:'.length) {
      database = { kind: 'sqlite', filename: rawDatabaseUrl.slice('sqlite:'.length) };
    } else {
      problems.push('DATABASE_URL: expected postgres://user@host:port/db, sqlite:<path> or sqlite::memory:');
    }
  }
  const dataDir = database.kind === 'sqlite' && database.filename !== ':memory:' ? path.dirname(path.resolve(database.filename)) : path.resolve('data');

  const redisUrl = read('REDIS_URL') ?? null;
  if (redisUrl !== null && !/^rediss?:\/\//.test(redisUrl)) {
    problems.push('REDIS_URL: expected redis://host:port or rediss://host:port');
  }
  const redisKeyPrefix = read('REDIS_KEY_PREFIX') ?? 'gatehouse';
  if (!/^[A-Za-z0-9:_-]{1,64}$/.test(redisKeyPrefix)) {
    problems.push('REDIS_KEY_PREFIX: expected 1 to 64 letters, digits, ":", "_" or "-"');
  }
  const timeout = (name: ConfigVariable, fallbackMs: number, minMs: number, maxMs: number, range: string): number => {
    const raw = read(name);
    if (raw === undefined) return fallbackMs;
    const ms = parseDurationMs(raw);
    if (ms !== null && ms >= minMs && ms <= maxMs) return ms;
    problems.push(`${name}: expected a duration from ${range}, such as 250ms, 5s or 1m (a bare number is seconds), got "${raw}"`);
    return fallbackMs;
  };
  const redisTimeoutMs = timeout('REDIS_TIMEOUT', 250, 10, 60_000, '10ms to 60s');
  const databaseQueryTimeoutMs = timeout('DATABASE_QUERY_TIMEOUT', 5000, 100, 3_600_000, '100ms to 1h');

  const jwtSecret = read('JWT_SECRET') ?? null;
  if (jwtSecret === null && mode === 'production') {
    problems.push('JWT_SECRET: required in production; set it to a random string of at least 32 characters (for example: openssl rand -base64 48)');
  } else if (jwtSecret !== null && jwtSecret.length < 32) {
    problems.push('JWT_SECRET: must be at least 32 characters');
  }

  const sessionExpiresInSeconds = integer('SESSION_EXPIRES_IN', 86400, 60, 31_536_000);
  let sessionIdleTimeoutSeconds: number | null = null;
  const rawIdleTimeout = read('SESSION_IDLE_TIMEOUT');
  // Unset, empty or zero (0, 0s, 0m, 0h): no idle timeout, the default.
  if (rawIdleTimeout !== undefined && !/^0+\s*[smh]?$/.test(rawIdleTimeout)) {
    const seconds = parseDurationSeconds(rawIdleTimeout);
    if (seconds === null || seconds < 60 || seconds > 31_536_000) {
      problems.push(`SESSION_IDLE_TIMEOUT: expected a duration from 1m to 8760h (365 days), such as 30m or 8h, or 0 for none, got "${rawIdleTimeout}"`);
    } else {
      sessionIdleTimeoutSeconds = seconds;
    }
  }
  const httpsBaseUrl = baseUrl.startsWith('https://');
  const rawAllowInsecure = read('ALLOW_INSECURE_BASE_URL');
  if (rawAllowInsecure !== undefined && rawAllowInsecure !== 'true' && rawAllowInsecure !== 'false') {
    problems.push(`ALLOW_INSECURE_BASE_URL: expected true or false, got "${rawAllowInsecure}"`);
  }
  if (mode === 'production' && !httpsBaseUrl && rawAllowInsecure !== 'true') {
    problems.push(
      `BASE_URL: production needs the https:// address people use (cookies are Secure only then), got "${baseUrl}"; behind a TLS-terminating proxy set it to the proxy's https address, or set ALLOW_INSECURE_BASE_URL=true to run over plain http`,
    );
  }
  const rawSessionCookieName = read('SESSION_COOKIE_NAME');
  const sessionCookieName = rawSessionCookieName ?? (httpsBaseUrl ? '__Host-gatehouse_session' : 'gatehouse_session');
  if (mode === 'production' && httpsBaseUrl && rawSessionCookieName !== undefined && !rawSessionCookieName.startsWith('__Host-')) {
    // Without the prefix, a sibling subdomain (or a plain-http page on this host) can set a
    // cookie of that name and fix the session the browser presents.
    problems.push(`SESSION_COOKIE_NAME: in production the name must start with __Host- (so no other site can set it), got "${rawSessionCookieName}"`);
  }
  if (!/^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/.test(sessionCookieName)) {
    problems.push("SESSION_COOKIE_NAME: expected a cookie name (letters, digits and !#$%&'*+-.^_`|~)");
  } else if (/^__(host|secure)-/i.test(sessionCookieName) && !httpsBaseUrl) {
    // Browsers accept __Host- and __Secure- cookies only with Secure, which is set only with an
    // https BASE_URL: otherwise such a name would make every sign-in fail.
    problems.push('SESSION_COOKIE_NAME: a __Host- or __Secure- name needs an https:// BASE_URL (the cookie is Secure only then)');
  }
  const bcryptRounds = integer('BCRYPT_ROUNDS', 10, 4, 15);
  if (mode === 'production' && bcryptRounds < 10) {
    // Low costs are for tests and development: a stolen hash at cost 4 is guessed 64 times faster.
    problems.push(`BCRYPT_ROUNDS: production needs a cost of at least 10 (4 to 9 are for tests and development), got "${bcryptRounds}"`);
  }

  const rawMigrate = read('MIGRATE_ON_START');
  if (rawMigrate !== undefined && !['true', 'false'].includes(rawMigrate)) {
    problems.push(`MIGRATE_ON_START: expected true or false, got "${rawMigrate}"`);
  }
  const migrateOnStart = rawMigrate !== 'false';

  const logLevels = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
  const rawLogLevel = read('LOG_LEVEL') ?? 'info';
  const logLevel = logLevels.find((level) => level === rawLogLevel);
  if (logLevel === undefined) problems.push(`LOG_LEVEL: expected one of ${logLevels.join(', ')}`);
  const rawLogFormat = read('LOG_FORMAT');
  if (rawLogFormat !== undefined && rawLogFormat !== 'json' && rawLogFormat !== 'pretty') {
    problems.push(`LOG_FORMAT: expected json or pretty (unset: pretty on a terminal, JSON otherwise), got "${rawLogFormat}"`);
  }
  const logFormat = rawLogFormat === 'json' || rawLogFormat === 'pretty' ? rawLogFormat : 'auto';

  const trustProxyHops = integer('TRUST_PROXY', 0, 0, 10);

  const rateLimits = { ...DEFAULT_RATE_LIMITS };
  for (const [name, variable] of Object.entries(RATE_LIMIT_VARIABLES) as [RateLimitName, ConfigVariable][]) {
    const raw = read(variable);
    if (raw === undefined) continue;
    const rule = parseRateLimitRule(raw);
    if (rule === null) problems.push(`${variable}: expected <count>/<window> such as 10/15m (window in seconds or with s, m, h), got "${raw}"`);
    else if (rule.durationSeconds > MAX_LIMIT_WINDOW_SECONDS) problems.push(`${variable}: the window must be at most 7 days (168h), got "${raw}"`);
    else rateLimits[name] = rule;
  }

  const auditRetentionDays = integer('AUDIT_RETENTION_DAYS', 365, 1, 36_500);
  const maxFailures = integer('LOCKOUT_MAX_FAILURES', 5, 1, 1000);
  let lockoutDurationSeconds = 15 * 60;
  const rawLockoutDuration = read('LOCKOUT_DURATION');
  if (rawLockoutDuration !== undefined) {
    const seconds = parseDurationSeconds(rawLockoutDuration);
    if (seconds === null) problems.push(`LOCKOUT_DURATION: expected a duration such as 900, 15m or 1h, got "${rawLockoutDuration}"`);
    else if (seconds > MAX_LIMIT_WINDOW_SECONDS) problems.push(`LOCKOUT_DURATION: must be at most 7 days (168h), got "${rawLockoutDuration}"`);
    else lockoutDurationSeconds = seconds;
  }

  const rawEmailSignInSignup = read('EMAIL_SIGN_IN_SIGNUP');
  if (rawEmailSignInSignup !== undefined && !['true', 'false'].includes(rawEmailSignInSignup)) {
    problems.push(`EMAIL_SIGN_IN_SIGNUP: expected true or false, got "${rawEmailSignInSignup}"`);
  }
  const emailSignInSignup = rawEmailSignInSignup === 'true';
  const metricsToken = read('METRICS_TOKEN') ?? null;
  if (metricsToken !== null && metricsToken.length < 16) problems.push('METRICS_TOKEN: must be at least 16 characters (for example: openssl rand -base64 32)');
  const rawMetricsPublic = read('METRICS_PUBLIC');
  if (rawMetricsPublic !== undefined && rawMetricsPublic !== 'true' && rawMetricsPublic !== 'false') {
    problems.push(`METRICS_PUBLIC: expected true or false, got "${rawMetricsPublic}"`);
  }
  const metricsPublic = rawMetricsPublic === 'true';
  if (mode === 'production' && metricsToken === null && !metricsPublic) {
    problems.push(
      'METRICS_TOKEN: required in production, or /metrics would be open to anyone who reaches the server; set it (for example: openssl rand -base64 32), or set METRICS_PUBLIC=true to leave /metrics open on purpose (kept off the public network)',
    );
  }

  const loginPageUrl = read('LOGIN_PAGE_URL') ?? '/login';
  const defaultReturnTo = read('DEFAULT_RETURN_TO') ?? '/dashboard';
  for (const [variable, value] of [
    ['LOGIN_PAGE_URL', loginPageUrl],
    ['DEFAULT_RETURN_TO', defaultReturnTo],
  ] as const) {
    if (!value.startsWith('/') || value.startsWith('//') || value.includes('\\')) {
      problems.push(`${variable}: expected a path on this origin starting with /, got "${value}"`);
    }
  }

  // The provider flow's variables never stop the start: the rest of the service runs
  // without them, and the flow names what is missing (DESIGN §3).
  const oauthProblems: string[] = [];
  const clientId = read('GITHUB_CLIENT_ID');
  const clientSecret = read('GITHUB_CLIENT_SECRET');
  if (clientId === undefined) oauthProblems.push('GITHUB_CLIENT_ID must be set');
  if (clientSecret === undefined) oauthProblems.push('GITHUB_CLIENT_SECRET must be set');
  const providerUrl = (name: ConfigVariable, fallback: string): string => {
    const raw = read(name) ?? fallback;
    if (!z.url({ protocol: /^https?$/ }).safeParse(raw).success) {
      problems.push(`${name}: expected an http(s) URL, got "${raw}"`);
      return fallback;
    }
    return raw.replace(/\/+$/, '');
  };
  const authUrl = providerUrl('GITHUB_AUTH_URL', 'https://github.com/login/oauth');
  const apiUrl = providerUrl('GITHUB_API_URL', 'https://api.github.com');
  const github = clientId && clientSecret ? { clientId, clientSecret, authUrl, apiUrl } : null;
  const oauthUnset = GITHUB_SIGN_IN_VARIABLES.filter((name) => read(name) === undefined);

  // AUTH_SECRET and ENCRYPTION_KEY_BASE64 serve every provider: their problems are each provider's.
  const sharedOAuthProblems: string[] = [];
  const authSecret = read('AUTH_SECRET') ?? null;
  if (authSecret === null) sharedOAuthProblems.push('AUTH_SECRET must be set (at least 16 characters)');
  else if (authSecret.length < 16) sharedOAuthProblems.push('AUTH_SECRET must be at least 16 characters');

  // The first key encrypts; the older ones, comma-separated after it, only decrypt (rotation).
  const encryptionKeys: Buffer[] = [];
  const rawKeys = read('ENCRYPTION_KEY_BASE64');
  if (rawKeys === undefined) {
    sharedOAuthProblems.push('ENCRYPTION_KEY_BASE64 must be set (base64 of 32 random bytes)');
  } else {
    for (const part of rawKeys.split(',').map((p) => p.trim())) {
      const key = /^[A-Za-z0-9+/]+={0,2}$/.test(part) ? Buffer.from(part, 'base64') : Buffer.alloc(0);
      if (key.length !== 32) {
        sharedOAuthProblems.push('ENCRYPTION_KEY_BASE64 must be the base64 of exactly 32 bytes (for example: openssl rand -base64 32)');
        encryptionKeys.length = 0;
        break;
      }
      encryptionKeys.push(key);
    }
  }
  oauthProblems.push(...sharedOAuthProblems);
  const oidcProviders = readOidcProviders(env, mode, problems, sharedOAuthProblems);

  const rawBreachCheck = read('PASSWORD_BREACH_CHECK') ?? 'off';
  if (rawBreachCheck !== 'off' && rawBreachCheck !== 'hibp') problems.push(`PASSWORD_BREACH_CHECK: expected off or hibp, got "${rawBreachCheck}"`);
  const breachRangeUrl = read('PASSWORD_BREACH_CHECK_URL') ?? HIBP_RANGE_URL;
  if (!/^https?:\/\/[^\s?#]+\/$/.test(breachRangeUrl) || (mode === 'production' && !breachRangeUrl.startsWith('https://'))) {
    problems.push('PASSWORD_BREACH_CHECK_URL: expected an https:// address ending in "/" (plain http only outside production)');
  }
  const passwordBreachCheck: BreachCheckSetting = rawBreachCheck === 'hibp' ? { kind: 'hibp', rangeUrl: breachRangeUrl } : { kind: 'off' };

  const appName = read('APP_NAME') ?? 'Gatehouse';
  if (/[\r\n<>"]/.test(appName) || appName.length > 60)
    problems.push('APP_NAME: expected a plain name of at most 60 characters, without quotes, angle brackets or line breaks');
  const smtpUrl = read('SMTP_URL') ?? null;
  if (smtpUrl !== null && !/^smtps?:\/\/[^\s]+$/.test(smtpUrl)) {
    problems.push('SMTP_URL: expected smtp://user:password@host:587 or smtps://user:password@host:465');
  } else if (smtpUrl !== null && smtpUrl.includes('?')) {
    // nodemailer lets URL parameters override its options (ignoreTLS, tls.rejectUnauthorized):
    // the TLS guarantees of SMTP_TLS must not be undone from inside the URL.
    problems.push('SMTP_URL: expected no query parameters (?…): TLS is set by SMTP_TLS, and nothing else is read from the URL');
  }
  const rawSmtpTls = read('SMTP_TLS') ?? 'required';
  if (rawSmtpTls !== 'required' && rawSmtpTls !== 'off') problems.push(`SMTP_TLS: expected required or off, got "${rawSmtpTls}"`);
  const smtpTls = rawSmtpTls === 'off' ? 'off' : 'required';
  const mailFrom = read('MAIL_FROM') ?? `"${appName}" <no-reply@${new URL(baseUrl).hostname}>`;
  if (/[\r\n]/.test(mailFrom) || !/@/.test(mailFrom)) problems.push('MAIL_FROM: expected an address such as "Acme" <no-reply@acme.example>');
  const mailMaxAttempts = integer('MAIL_MAX_ATTEMPTS', 5, 1, 100);
  const rawDelivery = read('MAIL_DELIVERY') ?? 'server';
  if (rawDelivery !== 'server' && rawDelivery !== 'worker') problems.push(`MAIL_DELIVERY: expected server or worker, got "${rawDelivery}"`);
  const delivery = rawDelivery === 'worker' ? 'worker' : 'server';

  const adminApiKey = read('ADMIN_API_KEY') ?? null;
  if (adminApiKey !== null && adminApiKey.length < 32) {
    problems.push('ADMIN_API_KEY: must be at least 32 characters (for example: openssl rand -base64 32), or unset to turn the admin API off');
  }

  if (problems.length > 0) throw new ConfigError(problems);

  return Object.freeze({
    mode,
    devConveniences,
    port,
    host,
    baseUrl,
    httpsBaseUrl,
    trustedOrigins: Object.freeze(trustedOrigins),
    database: Object.freeze(database),
    dataDir,
    redisUrl,
    redisKeyPrefix,
    redisTimeoutMs,
    databaseQueryTimeoutMs,
    jwtSecret,
    sessionExpiresInSeconds,
    sessionIdleTimeoutSeconds,
    sessionCookieName,
    bcryptRounds,
    passwordBreachCheck: Object.freeze(passwordBreachCheck),
    migrateOnStart,
    logLevel: logLevel ?? 'info',
    logFormat,
    trustProxyHops,
    rateLimits: Object.freeze(rateLimits),
    auditRetentionDays,
    lockout: Object.freeze({ maxFailures, durationSeconds: lockoutDurationSeconds }),
    loginPageUrl,
    defaultReturnTo,
    emailSignInSignup,
    metricsToken,
    metricsPublic,
    github: github && Object.freeze(github),
    authSecret: authSecret !== null && authSecret.length >= 16 ? authSecret : null,
    encryptionKeys: Object.freeze(encryptionKeys),
    generatedEncryptionKey: null,
    oauthProblems: Object.freeze(oauthProblems),
    oauthUnset: Object.freeze(oauthUnset),
    oidcProviders: Object.freeze(oidcProviders),
    mail: Object.freeze({ smtpUrl, smtpTls, from: mailFrom, appName, maxAttempts: mailMaxAttempts, delivery }),
    adminApiKey,
  });
}
