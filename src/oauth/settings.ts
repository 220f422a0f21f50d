/**
 * @module Sign-in providers' settings: GitHub, OpenID Connect providers (OIDC_PROVIDERS and each
 * id's OIDC_<ID>_* variables), the secrets every provider needs, where a provider sign-in lands,
 * and the limit on callbacks. A provider's own missing or malformed variable never stops the
 * start: the rest of the service runs without it, and its routes name what is missing.
 */
import { defineSettings, isHttpUrl, type Mode, type SettingsReader, type VariableDeclaration } from '../settings.js';

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

export interface ProviderSettings {
  loginPageUrl: string;
  defaultReturnTo: string;
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
}

const variables = [
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
] as const satisfies readonly VariableDeclaration[];

type ProviderReader = SettingsReader<(typeof variables)[number]['name']>;

/** The variables "Sign in with GitHub" needs, all four (docs/configuration.md). */
export const GITHUB_SIGN_IN_VARIABLES = [
  'GITHUB_CLIENT_ID',
  'GITHUB_CLIENT_SECRET',
  'AUTH_SECRET',
  'ENCRYPTION_KEY_BASE64',
] as const satisfies readonly (typeof variables)[number]['name'][];

/** OIDC_PROVIDERS ids: they become a path segment, a column value (32 characters) and part of variable names. */
const OIDC_PROVIDER_ID = /^[a-z][a-z0-9_]{0,31}$/;
/** A scope token (RFC 6749 §3.3). */
const SCOPE_TOKEN = /^[\x21\x23-\x5b\x5d-\x7e]+$/;

/** AUTH_SECRET and ENCRYPTION_KEY_BASE64, which serve every provider: their problems are each provider's. */
function readProviderSecrets(reader: ProviderReader): { authSecret: string | null; encryptionKeys: Buffer[]; problems: string[] } {
  const problems: string[] = [];
  const authSecret = reader.read('AUTH_SECRET') ?? null;
  if (authSecret === null) problems.push('AUTH_SECRET must be set (at least 16 characters)');
  else if (authSecret.length < 16) problems.push('AUTH_SECRET must be at least 16 characters');

  // The first key encrypts; the older ones, comma-separated after it, only decrypt (rotation).
  const encryptionKeys: Buffer[] = [];
  const rawKeys = reader.read('ENCRYPTION_KEY_BASE64');
  if (rawKeys === undefined) {
    problems.push('ENCRYPTION_KEY_BASE64 must be set (base64 of 32 random bytes)');
  } else {
    for (const part of rawKeys.split(',').map((p) => p.trim())) {
      const key = /^[A-Za-z0-9+/]+={0,2}$/.test(part) ? Buffer.from(part, 'base64') : Buffer.alloc(0);
      if (key.length !== 32) {
        problems.push('ENCRYPTION_KEY_BASE64 must be the base64 of exactly 32 bytes (for example: openssl rand -base64 32)');
        encryptionKeys.length = 0;
        break;
      }
      encryptionKeys.push(key);
    }
  }
  return { authSecret: authSecret !== null && authSecret.length >= 16 ? authSecret : null, encryptionKeys, problems };
}

/** One listed id's OIDC_<ID>_* variables; names built from the list are read with `readBuilt`. */
function readOidcProvider(reader: ProviderReader, id: string, mode: Mode, sharedProblems: readonly string[]): OidcProviderSetting {
  const prefix = `OIDC_${id.toUpperCase()}_`;
  const preset = OIDC_PRESETS[id];
  const own: string[] = [];

  const rawIssuer = reader.readBuilt(`${prefix}ISSUER`) ?? preset?.issuer;
  let issuer: string | null = null;
  if (rawIssuer === undefined) {
    own.push(`${prefix}ISSUER must be set (the provider's issuer URL, such as https://idp.example.com)`);
  } else if (!isHttpUrl(rawIssuer) || /[?#]/.test(rawIssuer)) {
    own.push(`${prefix}ISSUER must be an http(s) URL without query or fragment, got "${rawIssuer}"`);
  } else if (mode === 'production' && !rawIssuer.startsWith('https://')) {
    own.push(`${prefix}ISSUER must be an https:// URL in production (plain http only outside production), got "${rawIssuer}"`);
  } else {
    issuer = rawIssuer;
  }
  const clientId = reader.readBuilt(`${prefix}CLIENT_ID`) ?? null;
  if (clientId === null) own.push(`${prefix}CLIENT_ID must be set`);
  const clientSecret = reader.readBuilt(`${prefix}CLIENT_SECRET`) ?? null;
  if (clientSecret === null) own.push(`${prefix}CLIENT_SECRET must be set`);

  const name = reader.readBuilt(`${prefix}NAME`) ?? preset?.name ?? id;
  // eslint-disable-next-line no-control-regex -- finding control characters is the point
  if (name.length > 40 || /[\u0000-\u001f\u007f<>"]/.test(name)) {
    own.push(`${prefix}NAME must be a plain label of at most 40 characters, without quotes, angle brackets or line breaks`);
  }
  const rawScopes = reader.readBuilt(`${prefix}SCOPES`);
  const scopes = rawScopes === undefined ? DEFAULT_OIDC_SCOPES : [...new Set(rawScopes.split(/[\s,]+/).filter((scope) => scope !== ''))];
  if (!scopes.every((scope) => SCOPE_TOKEN.test(scope)) || !scopes.includes('openid')) {
    own.push(`${prefix}SCOPES must be space-separated scopes that include openid, such as "openid email profile", got "${rawScopes}"`);
  }

  // A preset's word on an address is trusted only at the preset's own host: a self-managed
  // GitLab's `email_verified` is whatever its administrators configured.
  const rawTrustEmail = reader.readBuilt(`${prefix}TRUST_EMAIL`);
  if (rawTrustEmail !== undefined && rawTrustEmail !== 'true' && rawTrustEmail !== 'false') {
    own.push(`${prefix}TRUST_EMAIL must be true or false, got "${rawTrustEmail}"`);
  }
  const atPresetHost = preset !== undefined && issuer !== null && new URL(issuer).host === new URL(preset.issuer).host;
  const trustEmail = rawTrustEmail === undefined ? atPresetHost : rawTrustEmail === 'true';

  return {
    id,
    name,
    config:
      issuer !== null && clientId !== null && clientSecret !== null && own.length === 0
        ? Object.freeze({ issuer, clientId, clientSecret, scopes: Object.freeze([...scopes]), trustEmail })
        : null,
    problems: Object.freeze([...own, ...sharedProblems]),
  };
}

/**
 * OIDC_PROVIDERS and each id's OIDC_<ID>_* variables. A malformed list stops the start (there is
 * no provider to answer for it); a provider's own missing or malformed variable only turns that
 * provider off, like GitHub's: its routes answer 503 naming the variable, the rest runs (DESIGN §3).
 */
function readOidcProviders(reader: ProviderReader, mode: Mode, sharedProblems: readonly string[]): OidcProviderSetting[] {
  const providers: OidcProviderSetting[] = [];
  for (const id of (reader.read('OIDC_PROVIDERS') ?? '').split(',').map((part) => part.trim())) {
    if (id === '') continue;
    if (!OIDC_PROVIDER_ID.test(id)) {
      reader.problem(`OIDC_PROVIDERS: expected comma-separated ids of lowercase letters, digits and _ (at most 32, starting with a letter), got "${id}"`);
    } else if (id === 'github') {
      reader.problem('OIDC_PROVIDERS: "github" is the built-in GitHub provider (GITHUB_CLIENT_ID, GITHUB_CLIENT_SECRET); choose another id');
    } else if (providers.some((provider) => provider.id === id)) {
      reader.problem(`OIDC_PROVIDERS: "${id}" is listed twice`);
    } else {
      providers.push(readOidcProvider(reader, id, mode, sharedProblems));
    }
  }
  return providers;
}

export const providerSettings = defineSettings({
  name: 'sign-in providers',
  variables,
  rateLimits: {
    oauthCallback: {
      name: 'RATE_LIMIT_OAUTH_CALLBACK',
      default: '20/15m',
      meaning: 'sign-in provider callbacks per client IP (a refused one lands on the login page)',
    },
  },
  read: (reader, { mode }): ProviderSettings => {
    const loginPageUrl = reader.read('LOGIN_PAGE_URL') ?? '/login';
    const defaultReturnTo = reader.read('DEFAULT_RETURN_TO') ?? '/dashboard';
    for (const [variable, value] of [
      ['LOGIN_PAGE_URL', loginPageUrl],
      ['DEFAULT_RETURN_TO', defaultReturnTo],
    ] as const) {
      if (!value.startsWith('/') || value.startsWith('//') || value.includes('\\')) {
        reader.problem(`${variable}: expected a path on this origin starting with /, got "${value}"`);
      }
    }

    // The provider flow's variables never stop the start: the rest of the service runs
    // without them, and the flow names what is missing (DESIGN §3).
    const oauthProblems: string[] = [];
    const clientId = reader.read('GITHUB_CLIENT_ID');
    const clientSecret = reader.read('GITHUB_CLIENT_SECRET');
    if (clientId === undefined) oauthProblems.push('GITHUB_CLIENT_ID must be set');
    if (clientSecret === undefined) oauthProblems.push('GITHUB_CLIENT_SECRET must be set');
    const authUrl = reader.httpUrl('GITHUB_AUTH_URL', 'https://github.com/login/oauth');
    const apiUrl = reader.httpUrl('GITHUB_API_URL', 'https://api.github.com');
    const github = clientId && clientSecret ? Object.freeze({ clientId, clientSecret, authUrl, apiUrl }) : null;
    const oauthUnset = GITHUB_SIGN_IN_VARIABLES.filter((name) => reader.read(name) === undefined);

    const secrets = readProviderSecrets(reader);
    oauthProblems.push(...secrets.problems);
    return {
      loginPageUrl,
      defaultReturnTo,
      github,
      authSecret: secrets.authSecret,
      encryptionKeys: Object.freeze(secrets.encryptionKeys),
      generatedEncryptionKey: null,
      oauthProblems: Object.freeze(oauthProblems),
      oauthUnset: Object.freeze(oauthUnset),
      oidcProviders: Object.freeze(readOidcProviders(reader, mode, secrets.problems)),
    };
  },
});
