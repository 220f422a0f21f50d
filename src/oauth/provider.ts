/**
 * @module What the sign-in flow needs from an identity provider, and how a provider call fails.
 * A provider turns the flow's state, nonce and PKCE challenge into an authorization URL, a code
 * into tokens, and tokens into a profile with the provider's word on the email. GitHub
 * (`providers/github.ts`) and every OpenID Connect provider (`providers/oidc.ts`) implement this
 * one interface; the flow knows no provider by name.
 */

export interface AuthorizationRequest {
  state: string;
  /** S256 challenge of the verifier (RFC 7636 §4.2). */
  codeChallenge: string;
  /** OpenID Connect's nonce (Core §3.1.2.1): the ID token must carry it. Plain OAuth providers ignore it. */
  nonce: string;
  redirectUri: string;
  /** The request's time (the injected clock), for what a provider caches, such as its discovery document. */
  now: Date;
}

export interface CodeExchange {
  code: string;
  codeVerifier: string;
  /** The same redirect_uri as in the authorization request (RFC 6749 §4.1.3). */
  redirectUri: string;
  /** The state of this sign-in, already checked by the flow; an OpenID provider's library checks it again. */
  state: string;
  /** The nonce sent in the authorization request. */
  nonce: string;
  /** The callback's `iss` parameter (RFC 9207), when the provider sent one: an OpenID provider checks it. */
  issuer: string | undefined;
  now: Date;
}

export interface ProviderTokens {
  accessToken: string;
  refreshToken: string | null;
  /** null when the provider issues a non-expiring token (GitHub OAuth apps by default). */
  accessTokenExpiresInSeconds: number | null;
  grantedScopes: string[];
  /**
   * OpenID Connect: the claims of the ID token, once its signature, issuer, audience, nonce and
   * times are verified; null for a plain OAuth provider.
   */
  idTokenClaims: Readonly<Record<string, unknown>> | null;
}

export interface ProviderProfile {
  /** The provider's stable id for the user (never the login, which can change). */
  providerUserId: string;
  login: string;
  /** The user's primary email as the provider reports it, or null. */
  email: string | null;
  /** True only when the provider itself says it verified `email`; linking relies on it. */
  emailVerified: boolean;
}

export interface OAuthProvider {
  /** The path segment of /api/auth/oauth/:provider, e.g. `github`. */
  readonly id: string;
  /** For messages shown to people: `GitHub`. */
  readonly displayName: string;
  /**
   * Whether the provider's word that an email is verified is a proof of the mailbox here: it links
   * into the existing account of that address and gives a new account its address. When false,
   * the email is treated as unverified (OIDC_<ID>_TRUST_EMAIL; GitHub's verified primary email: true).
   */
  readonly trustsEmail: boolean;
  /** Fails with a ProviderRequestError when the provider cannot be reached (an OpenID provider's discovery). */
  createAuthorizationURL(request: AuthorizationRequest): Promise<URL>;
  exchangeCode(exchange: CodeExchange): Promise<ProviderTokens>;
  fetchProfile(tokens: ProviderTokens, now: Date): Promise<ProviderProfile>;
}

/**
 * How a call to a provider failed, in the kinds arctic distinguishes (arctic v3
 * `src/request.ts`): the network (including our time bound), a protocol error the provider
 * named (`bad_verification_code`), or a response we cannot use; plus, for OpenID Connect, an ID
 * token that fails verification. Never carries a token or secret, so it is safe to log and to audit.
 */
export type ProviderFailure =
  | { kind: 'network'; timedOut: boolean }
  | { kind: 'provider_error'; code: string }
  | { kind: 'unexpected_response'; status: number }
  | { kind: 'too_large'; maxBytes: number }
  /** An answer that breaks the protocol: `reason` is a short word such as `issuer_mismatch`. */
  | { kind: 'invalid_response'; reason: string }
  /** The ID token failed a check (`reason`: nonce, audience, issuer, expired, signature, unsigned, …). */
  | { kind: 'invalid_id_token'; reason: string };

export class ProviderRequestError extends Error {
  readonly failure: ProviderFailure;

  constructor(failure: ProviderFailure, message: string, options: { cause?: unknown } = {}) {
    super(message, { cause: options.cause });
    this.name = 'ProviderRequestError';
    this.failure = failure;
  }
}

/**
 * Provider error codes are echoed into audit entries and the login page's message: anything
 * outside a plain token-like shape (RFC 6749 §5.2 codes are ASCII words) is not repeated.
 */
export function toSafeErrorCode(code: string): string {
  return /^[A-Za-z0-9_.-]{1,64}$/.test(code) ? code : 'unrecognised_error';
}

/** A short, secret-free label for audit metadata and messages: `timeout`, `bad_verification_code`, `http_500`. */
export function describeProviderFailure(failure: ProviderFailure): string {
  switch (failure.kind) {
    case 'network':
      return failure.timedOut ? 'timeout' : 'network_error';
    case 'provider_error':
      return failure.code;
    case 'unexpected_response':
      return `http_${failure.status}`;
    case 'too_large':
      return 'response_too_large';
    case 'invalid_response':
      return failure.reason;
    case 'invalid_id_token':
      return `id_token_${failure.reason}`;
  }
}
