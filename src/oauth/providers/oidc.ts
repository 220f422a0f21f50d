/**
 * @module Any OpenID Connect provider (Google, GitLab, Microsoft, a company's own) on panva's
 * openid-client: discovery, the authorization code flow with PKCE S256, state and nonce, and the
 * ID token verified against the issuer's JWKS. No JOSE is written here: openid-client (over
 * oauth4webapi) checks the signature, `iss`, `aud`, `exp`, `iat` and `nonce`; this module adds
 * the two checks it leaves to its caller (`azp` with a single audience, an `iat` in the future)
 * and reads the claims.
 *
 * - The signature is checked even for an ID token straight from the token endpoint, which
 *   OpenID Connect Core §3.1.3.7 lets a client skip and both libraries skip by default
 *   (`enableNonRepudiationChecks`). So an ID token signed with a symmetric key (HS256 over the
 *   client secret) is refused: only the issuer's published keys count.
 * - Discovery is cached per provider for DISCOVERY_MAX_AGE_MS on the injected clock, and shared by
 *   concurrent sign-ins. A failure is never cached: the next sign-in tries again. A refresh that
 *   fails keeps the document already known. The JWKS is cached by openid-client with the
 *   document (and fetched again when a token names a key it does not know).
 * - Every request goes through `createBoundedFetch` (our time bound and 1 MiB cap), and every
 *   failure becomes a ProviderRequestError with a short, secret-free reason, so the flow answers
 *   the start with 503 `provider_unavailable` and the callback with a redirect, never a crash.
 * - Timestamps (`exp`, `iat`) are compared with the system clock, as the provider stamps them
 *   with its own real clock; the injected clock drives our own expiries (the flow, the cache).
 */
import type * as OpenIdClient from 'openid-client';
import { systemClock } from '../../clock.js';
import type { OidcProviderConfig } from '../settings.js';
import { oneLine } from '../../plain-text.js';
import { createBoundedFetch, type ProviderHTTPOptions } from '../http.js';
import { PKCE_METHOD } from '../pkce.js';
import { ProviderRequestError, toSafeErrorCode, type OAuthProvider, type ProviderFailure, type ProviderProfile, type ProviderTokens } from '../provider.js';

/** How long a discovery document is used before it is fetched again. */
export const DISCOVERY_MAX_AGE_MS = 24 * 3600 * 1000;

/** openid-client's default tolerance for `exp` and `nbf`; the `iat` check below uses the same. */
const CLOCK_TOLERANCE_SECONDS = 30;

/** accounts.provider_account_id and provider_login hold at most 255 characters. */
const MAX_IDENTIFIER_CHARS = 255;

export interface OidcProviderOptions {
  id: string;
  displayName: string;
  config: Readonly<OidcProviderConfig>;
  http: ProviderHTTPOptions;
}

/**
 * openid-client (and oauth4webapi and jose under it) is loaded at the first discovery, not at
 * start: a deployment without OIDC_PROVIDERS never pays its memory (DESIGN §10). Every use below
 * runs after a discovery has loaded it.
 */
let client: typeof OpenIdClient | undefined;
async function loadClient(): Promise<typeof OpenIdClient> {
  client ??= await import('openid-client');
  return client;
}

/** The loaded module, for code that only runs after a discovery. */
function loaded(): typeof OpenIdClient {
  if (client === undefined) throw new Error('openid-client is used before the first discovery loaded it');
  return client;
}

/** The token endpoint's answer, with its helpers (`claims()`). */
type OidcAnswer = Awaited<ReturnType<typeof OpenIdClient.authorizationCodeGrant>>;

export function createOidcProvider({ id, displayName, config, http }: OidcProviderOptions): OAuthProvider {
  const issuer = new URL(config.issuer);
  const boundedFetch = createBoundedFetch(http);
  const discovery = createDiscoveryCache(() => discover({ issuer, displayName, config, boundedFetch, timeoutMs: http.timeoutMs }), DISCOVERY_MAX_AGE_MS);

  return {
    id,
    displayName,
    trustsEmail: config.trustEmail,

    async createAuthorizationURL({ state, codeChallenge, nonce, redirectUri, now }) {
      const configuration = await discovery.get(now);
      try {
        return loaded().buildAuthorizationUrl(configuration, {
          redirect_uri: redirectUri,
          scope: config.scopes.join(' '),
          state,
          nonce,
          code_challenge: codeChallenge,
          code_challenge_method: PKCE_METHOD,
        });
      } catch (error) {
        throw asProviderError(error, `${displayName}'s authorization endpoint could not be used`);
      }
    },

    async exchangeCode({ code, codeVerifier, redirectUri, state, nonce, issuer: issuerParameter, now }): Promise<ProviderTokens> {
      const configuration = await discovery.get(now);
      // openid-client reads the callback's parameters from this URL, and the redirect_uri of the
      // token request from the URL without them.
      const callback = new URL(redirectUri);
      callback.searchParams.set('code', code);
      callback.searchParams.set('state', state);
      if (issuerParameter !== undefined) callback.searchParams.set('iss', issuerParameter);
      let answer: OidcAnswer;
      try {
        answer = await loaded().authorizationCodeGrant(configuration, callback, {
          pkceCodeVerifier: codeVerifier,
          expectedState: state,
          expectedNonce: nonce,
          idTokenExpected: true,
        });
      } catch (error) {
        throw asProviderError(error, `${displayName} refused the code, or its answer failed verification`);
      }
      const claims = answer.claims();
      checkIdTokenClaims(claims, displayName, config.clientId);
      return toProviderTokens(answer, claims, config.scopes);
    },

    async fetchProfile(tokens, now): Promise<ProviderProfile> {
      const claims = tokens.idTokenClaims;
      if (claims === null || typeof claims.sub !== 'string') throw idTokenError('missing', `${displayName} sent no ID token`);
      let emailSource: Readonly<Record<string, unknown>> = claims;
      let userinfo: Readonly<Record<string, unknown>> = {};
      // Providers that follow OpenID Connect Core §5.4 to the letter (oidc-provider, GitLab for
      // some claims) put email and email_verified only in the userinfo answer.
      if (typeof claims.email !== 'string' || typeof claims.email_verified !== 'boolean') {
        const configuration = await discovery.get(now);
        if (configuration.serverMetadata().userinfo_endpoint !== undefined) {
          try {
            // The answer's `sub` must be the ID token's (Core §5.3.2): checked by openid-client.
            userinfo = await loaded().fetchUserInfo(configuration, tokens.accessToken, claims.sub);
          } catch (error) {
            throw asProviderError(error, `${displayName}'s userinfo endpoint could not be read`);
          }
          if (typeof userinfo.email === 'string') emailSource = userinfo;
        }
      }
      return readProfile(claims, claims.sub, userinfo, emailSource);
    },
  };
}

interface DiscoveryTarget {
  issuer: URL;
  displayName: string;
  config: Readonly<OidcProviderConfig>;
  boundedFetch: ReturnType<typeof createBoundedFetch>;
  timeoutMs: number;
}

/** The issuer's discovery document, fetched through our bounded fetch; see the module comment for the checks it turns on. */
async function discover({ issuer, displayName, config, boundedFetch, timeoutMs }: DiscoveryTarget): Promise<OpenIdClient.Configuration> {
  // loadConfig refuses a plain-http issuer in production; outside it, a local issuer may be http.
  const allowHttp = issuer.protocol === 'http:';
  try {
    const client = await loadClient();
    return await client.discovery(issuer, config.clientId, { client_secret: config.clientSecret }, clientSecretAuth(client, config.clientSecret), {
      [client.customFetch]: (url, init) => boundedFetch(url, init as RequestInit),
      timeout: timeoutMs / 1000,
      execute: allowHttp ? [client.enableNonRepudiationChecks, client.allowInsecureRequests] : [client.enableNonRepudiationChecks],
    });
  } catch (error) {
    throw asProviderError(error, `${displayName}'s discovery document could not be used`);
  }
}

/** The checks openid-client leaves to its caller (module comment), and a subject that fits our columns. */
function checkIdTokenClaims(claims: OpenIdClient.IDToken | undefined, displayName: string, clientId: string): asserts claims is OpenIdClient.IDToken {
  if (claims === undefined) throw idTokenError('missing', `${displayName} sent no ID token`);
  // OpenID Connect Core §3.1.3.7 (5): when `azp` is present it must be us. openid-client
  // checks it only when `aud` lists several audiences.
  if (claims.azp !== undefined && claims.azp !== clientId) {
    throw idTokenError('authorized_party', `${displayName}'s ID token was issued to another client`);
  }
  if (claims.iat > Math.floor(systemClock.now().getTime() / 1000) + CLOCK_TOLERANCE_SECONDS) {
    throw idTokenError('issued_in_future', `${displayName}'s ID token was issued in the future`);
  }
  if (claims.sub.length === 0 || claims.sub.length > MAX_IDENTIFIER_CHARS) {
    throw idTokenError('subject', `${displayName}'s ID token has no usable subject`);
  }
}

function toProviderTokens(answer: OidcAnswer, claims: OpenIdClient.IDToken, scopes: readonly string[]): ProviderTokens {
  const expiresIn = answer.expires_in;
  return {
    accessToken: answer.access_token,
    refreshToken: answer.refresh_token ?? null,
    accessTokenExpiresInSeconds: typeof expiresIn === 'number' && Number.isFinite(expiresIn) && expiresIn > 0 ? Math.floor(expiresIn) : null,
    // RFC 6749 §5.1: without `scope`, the provider granted what was asked.
    grantedScopes: (answer.scope ?? scopes.join(' ')).split(' ').filter((scope) => scope !== ''),
    idTokenClaims: claims,
  };
}

/** The profile from the ID token's claims and the userinfo answer; `emailSource` is whichever of them gave the email. */
function readProfile(
  claims: Readonly<Record<string, unknown>>,
  subject: string,
  userinfo: Readonly<Record<string, unknown>>,
  emailSource: Readonly<Record<string, unknown>>,
): ProviderProfile {
  // The email and its verification come from the same answer: a verified flag from one
  // source never vouches for an address from another.
  const email = typeof emailSource.email === 'string' ? emailSource.email.trim().toLowerCase() : '';
  const login = [userinfo.preferred_username, claims.preferred_username, email, userinfo.name, claims.name, subject].find(
    (value): value is string => typeof value === 'string' && oneLine(value, MAX_IDENTIFIER_CHARS) !== '',
  );
  return {
    providerUserId: subject,
    // For audit rows and the account list: one printable line.
    login: oneLine(login ?? subject, MAX_IDENTIFIER_CHARS),
    email: email === '' ? null : email,
    // Only the boolean true verifies (not "true", not a missing claim): Microsoft, for one,
    // sends no email_verified, so its users are never linked by email.
    emailVerified: email !== '' && emailSource.email_verified === true,
  };
}

/**
 * The client authentication the token endpoint asks for: client_secret_basic, the default of
 * OpenID Connect Core §9 and RFC 8414 §2, unless the issuer lists only client_secret_post.
 */
function clientSecretAuth(client: typeof OpenIdClient, clientSecret: string): OpenIdClient.ClientAuth {
  const basic = client.ClientSecretBasic(clientSecret);
  const post = client.ClientSecretPost(clientSecret);
  return (as, metadata, body, headers) => {
    const methods = as.token_endpoint_auth_methods_supported;
    const usePost = methods !== undefined && !methods.includes('client_secret_basic') && methods.includes('client_secret_post');
    return (usePost ? post : basic)(as, metadata, body, headers);
  };
}

interface DiscoveryCache {
  /** The discovered configuration, loaded at most once at a time; a failure is not kept. */
  get(now: Date): Promise<OpenIdClient.Configuration>;
}

function createDiscoveryCache(load: () => Promise<OpenIdClient.Configuration>, maxAgeMs: number): DiscoveryCache {
  let cached: { configuration: OpenIdClient.Configuration; loadedAt: number } | null = null;
  let loading: Promise<OpenIdClient.Configuration> | null = null;
  return {
    async get(now) {
      if (cached !== null && now.getTime() - cached.loadedAt < maxAgeMs) return cached.configuration;
      loading ??= load()
        .then((configuration) => {
          cached = { configuration, loadedAt: now.getTime() };
          return configuration;
        })
        .finally(() => {
          loading = null;
        });
      try {
        return await loading;
      } catch (error) {
        // A refresh that fails keeps the document already known; without one, the caller fails.
        if (cached !== null) return cached.configuration;
        throw error;
      }
    },
  };
}

function idTokenError(reason: string, message: string): ProviderRequestError {
  return new ProviderRequestError({ kind: 'invalid_id_token', reason }, message);
}

/** ID token claims and the reason a failed comparison of each gives. */
const CLAIM_REASONS: Readonly<Record<string, string>> = {
  nonce: 'nonce',
  aud: 'audience',
  iss: 'issuer',
  azp: 'authorized_party',
  exp: 'expired',
  nbf: 'not_yet_valid',
  iat: 'issued_at',
  auth_time: 'auth_time',
};

/**
 * Any failure of openid-client as a ProviderRequestError. Our own fetch's failure (network, time
 * bound, size cap) travels inside the library's error as a cause and is passed on as it is.
 * Nothing of the error's content beyond a short reason is kept: its causes hold the provider's
 * answer, which may hold tokens.
 */
function asProviderError(error: unknown, message: string): ProviderRequestError {
  const failure = classify(error);
  return failure instanceof ProviderRequestError ? failure : new ProviderRequestError(failure, `${message} (${describe(failure)})`);
}

function describe(failure: ProviderFailure): string {
  return failure.kind === 'invalid_id_token' || failure.kind === 'invalid_response' ? failure.reason : failure.kind;
}

function classify(error: unknown): ProviderFailure | ProviderRequestError {
  for (let cause: unknown = error, depth = 0; cause instanceof Error && depth < 5; cause = cause.cause, depth += 1) {
    if (cause instanceof ProviderRequestError) return cause;
  }
  // The module failed to load: nothing below can classify the error.
  if (client === undefined) return { kind: 'invalid_response', reason: 'unexpected_error' };
  if (error instanceof client.ResponseBodyError || error instanceof client.AuthorizationResponseError) {
    return { kind: 'provider_error', code: toSafeErrorCode(error.error) };
  }
  if (error instanceof client.WWWAuthenticateChallengeError) return { kind: 'unexpected_response', status: error.status };
  if (!(error instanceof client.ClientError)) return { kind: 'invalid_response', reason: 'unexpected_error' };
  const detail = findDetail(error);
  switch (error.code) {
    case 'OAUTH_RESPONSE_IS_NOT_CONFORM':
    case 'OAUTH_RESPONSE_IS_NOT_JSON':
      return { kind: 'unexpected_response', status: detail.status ?? 0 };
    case 'OAUTH_JSON_ATTRIBUTE_COMPARISON_FAILED':
      return { kind: 'invalid_response', reason: `${toSafeErrorCode(detail.attribute ?? 'attribute')}_mismatch` };
    case 'OAUTH_JWT_CLAIM_COMPARISON_FAILED':
    case 'OAUTH_JWT_TIMESTAMP_CHECK_FAILED':
      return { kind: 'invalid_id_token', reason: CLAIM_REASONS[detail.claim ?? ''] ?? 'claims' };
    case 'OAUTH_KEY_SELECTION_FAILED':
      return { kind: 'invalid_id_token', reason: 'unknown_key' };
    case 'OAUTH_UNSUPPORTED_OPERATION':
      return detail.alg === undefined ? { kind: 'invalid_response', reason: 'unsupported' } : { kind: 'invalid_id_token', reason: algorithmReason(detail.alg) };
    case 'OAUTH_HTTP_REQUEST_FORBIDDEN':
    case 'OAUTH_REQUEST_PROTOCOL_FORBIDDEN':
      return { kind: 'invalid_response', reason: 'insecure_endpoint' };
    case 'OAUTH_MISSING_SERVER_METADATA':
    case 'OAUTH_INVALID_SERVER_METADATA':
      return { kind: 'invalid_response', reason: 'incomplete_metadata' };
    case 'OAUTH_TIMEOUT':
      return { kind: 'network', timedOut: true };
    case 'OAUTH_INVALID_RESPONSE':
    case 'OAUTH_PARSE_ERROR': {
      // oauth4webapi names the check only in its message; these are its ID token checks.
      const text = messagesOf(error);
      // RFC 9207: the callback's `iss` is missing or names another issuer (a mix-up).
      if (text.includes('"iss" (issuer) response parameter') || text.includes('response parameter "iss"'))
        return { kind: 'invalid_response', reason: 'issuer_parameter' };
      if (text.includes('signature verification failed')) return { kind: 'invalid_id_token', reason: 'signature' };
      const missingClaim = /JWT "(\w+)" \([^)]*\) claim missing/.exec(text)?.[1];
      if (missingClaim !== undefined) return { kind: 'invalid_id_token', reason: `missing_${missingClaim}` };
      if (detail.alg !== undefined || text.includes('"alg"')) return { kind: 'invalid_id_token', reason: algorithmReason(detail.alg) };
      if (text.includes('JWT') || text.includes('ID Token')) return { kind: 'invalid_id_token', reason: 'malformed' };
      return { kind: 'invalid_response', reason: 'invalid_response' };
    }
    default:
      return { kind: 'invalid_response', reason: 'invalid_response' };
  }
}

function algorithmReason(alg: string | undefined): string {
  return alg === 'none' ? 'unsigned' : 'algorithm';
}

/** What oauth4webapi says about a failed check, from the error's causes: the claim, attribute, header alg or HTTP status. */
function findDetail(error: Error): { claim?: string; attribute?: string; alg?: string; status?: number } {
  const detail: { claim?: string; attribute?: string; alg?: string; status?: number } = {};
  for (let cause: unknown = error, depth = 0; cause !== null && typeof cause === 'object' && depth < 5; depth += 1) {
    if (cause instanceof Response) detail.status ??= cause.status;
    const record = cause as { claim?: unknown; attribute?: unknown; alg?: unknown; header?: { alg?: unknown }; cause?: unknown };
    if (typeof record.claim === 'string') detail.claim ??= record.claim;
    if (typeof record.attribute === 'string') detail.attribute ??= record.attribute;
    if (typeof record.alg === 'string') detail.alg ??= record.alg;
    if (typeof record.header?.alg === 'string') detail.alg ??= record.header.alg;
    cause = record.cause;
  }
  return detail;
}

function messagesOf(error: Error): string {
  const messages: string[] = [];
  for (let cause: unknown = error, depth = 0; cause instanceof Error && depth < 5; cause = cause.cause, depth += 1) messages.push(cause.message);
  return messages.join(' | ');
}
