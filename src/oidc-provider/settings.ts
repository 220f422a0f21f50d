/** @module The OpenID Connect provider's settings: token lifetimes, resource servers, key rotation, limits. */
import { defineSettings } from '../settings.js';

export interface OidcProviderConfig {
  accessTokenTtlSeconds: number;
  refreshTokenTtlSeconds: number;
  idTokenTtlSeconds: number;
  /** Resource servers (RFC 8707): a token asked for one of them is a JWT access token for it. */
  resources: readonly string[];
  /** How long `gatehouse keys rotate` publishes new keys before they sign. */
  keyRotationDelayMs: number;
  /** How long a rotated refresh token may still be used, for two refreshes racing. */
  refreshGraceSeconds: number;
}

export interface OidcProviderSettings {
  oidcProvider: Readonly<OidcProviderConfig>;
}

const MINUTE_MS = 60_000;
const DAY_MS = 24 * 60 * MINUTE_MS;

export const oidcProviderSettings = defineSettings({
  name: 'oidcProvider',
  variables: [
    { name: 'OIDC_ACCESS_TOKEN_TTL', default: '10m', meaning: 'lifetime of access tokens Gatehouse issues to apps (1m to 24h)' },
    { name: 'OIDC_REFRESH_TOKEN_TTL', default: '720h', meaning: 'lifetime of refresh tokens, 30 days by default; each use gives a new one (1h to 8760h)' },
    { name: 'OIDC_ID_TOKEN_TTL', default: '1h', meaning: 'lifetime of ID tokens (1m to 24h)' },
    {
      name: 'OIDC_RESOURCES',
      default: '',
      meaning: 'comma-separated URIs of your APIs: an access token asked for one of them is a JWT it verifies with the JWKS alone',
    },
    {
      name: 'OIDC_KEY_ROTATION_DELAY',
      default: '1h',
      meaning: 'how long `gatehouse keys rotate` publishes new signing keys before signing with them (1s to 168h; --now skips it)',
    },
    { name: 'OIDC_REFRESH_GRACE', default: '5s', meaning: 'how long a used refresh token still works, for two refreshes racing (1s to 10s)' },
  ],
  rateLimits: {
    oidcToken: {
      name: 'RATE_LIMIT_OIDC_TOKEN',
      default: '600/1m',
      meaning:
        'token, introspection, revocation and device authorization requests per client IP and, separately, per client (one authenticating with HTTP Basic)',
    },
    oidcAuthorize: {
      name: 'RATE_LIMIT_OIDC_AUTHORIZE',
      default: '60/1m',
      meaning: 'authorization requests (an app sending someone to sign in) per client IP',
    },
  },
  read: (reader): OidcProviderSettings => {
    const resources: string[] = [];
    for (const entry of (reader.read('OIDC_RESOURCES') ?? '').split(',')) {
      const value = entry.trim();
      if (value === '') continue;
      if (!URL.canParse(value) || value.includes('#')) reader.problem(`OIDC_RESOURCES: "${value}" is not an absolute URI without a fragment`);
      else resources.push(value);
    }
    return {
      oidcProvider: Object.freeze({
        accessTokenTtlSeconds: reader.durationMs('OIDC_ACCESS_TOKEN_TTL', 10 * MINUTE_MS, MINUTE_MS, DAY_MS, '1m to 24h') / 1000,
        refreshTokenTtlSeconds: reader.durationMs('OIDC_REFRESH_TOKEN_TTL', 30 * DAY_MS, 60 * MINUTE_MS, 365 * DAY_MS, '1h to 8760h') / 1000,
        idTokenTtlSeconds: reader.durationMs('OIDC_ID_TOKEN_TTL', 60 * MINUTE_MS, MINUTE_MS, DAY_MS, '1m to 24h') / 1000,
        resources: Object.freeze(resources),
        keyRotationDelayMs: reader.durationMs('OIDC_KEY_ROTATION_DELAY', 60 * MINUTE_MS, 1000, 7 * DAY_MS, '1s to 168h'),
        refreshGraceSeconds: reader.durationMs('OIDC_REFRESH_GRACE', 5_000, 1000, 10_000, '1s to 10s') / 1000,
      }),
    };
  },
});
