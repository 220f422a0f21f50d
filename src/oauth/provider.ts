/**
 * @module What the sign-in flow needs from an identity provider, and how a provider call fails.
 * A provider turns the flow's state and PKCE challenge into an authorization URL, a code into
 * tokens, and tokens into a profile with the provider's word on the email. GitHub is built in
 * (`providers/github.ts`); GitLab, Gitea or a generic OIDC provider implement the same
 * interface without touching the flow.
 */

export interface AuthorizationRequest {
  state: string;
  /** S256 challenge of the verifier (RFC 7636 §4.2). */
  codeChallenge: string;
  redirectUri: string;
}

export interface CodeExchange {
  code: string;
  codeVerifier: string;
  /** The same redirect_uri as in the authorization request (RFC 6749 §4.1.3). */
  redirectUri: string;
}

export interface ProviderTokens {
  accessToken: string;
  refreshToken: string | null;
  /** null when the provider issues a non-expiring token (GitHub OAuth apps by default). */
  accessTokenExpiresInSeconds: number | null;
  grantedScopes: string[];
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
  createAuthorizationURL(request: AuthorizationRequest): URL;
  exchangeCode(exchange: CodeExchange): Promise<ProviderTokens>;
  fetchProfile(tokens: ProviderTokens): Promise<ProviderProfile>;
}

/**
 * How a call to a provider failed, in the three kinds arctic distinguishes (arctic v3
 * `src/request.ts`): the network (including our time bound), a protocol error the provider
 * named (`bad_verification_code`), or a response we cannot use. Never carries a token or
 * secret, so it is safe to log and to audit.
 */
export type ProviderFailure =
  | { kind: 'network'; timedOut: boolean }
  | { kind: 'provider_error'; code: string }
  | { kind: 'unexpected_response'; status: number }
  | { kind: 'too_large'; maxBytes: number };

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
  }
}
