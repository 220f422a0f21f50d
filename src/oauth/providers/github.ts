/**
 * @module The built-in GitHub provider (OAuth app web flow with PKCE). GitHub's quirks, with
 * sources, are in the shared github-oauth.md; the ones handled here:
 * - the token endpoint answers errors with HTTP 200 and an `error` field, and answers
 *   urlencoded unless asked for JSON (docs.github.com …/troubleshooting-oauth-app-access-token-request-errors);
 * - the granted `scope` comes back comma-separated;
 * - every REST call needs a User-Agent (docs.github.com …/getting-started-with-the-rest-api#user-agent);
 * - the identity is the numeric `id`, never the login;
 * - the email comes from `/user/emails` (`primary` and `verified`), never from `/user.email`,
 *   which is only the public address and says nothing about verification.
 */
import { z } from 'zod';
import type { GitHubProviderConfig } from '../settings.js';
import { requestJSON, type ProviderHTTPOptions } from '../http.js';
import { PKCE_METHOD } from '../pkce.js';
import { ProviderRequestError, toSafeErrorCode, type OAuthProvider, type ProviderProfile, type ProviderTokens } from '../provider.js';

/** Least privilege: read the profile and the email addresses, nothing writable (github-oauth.md §5). */
export const GITHUB_SCOPES = ['read:user', 'user:email'] as const;

const USER_AGENT = 'Gatehouse';

const tokenResponse = z.object({
  access_token: z.string().min(1),
  token_type: z.string().optional(),
  scope: z.string().optional(),
  refresh_token: z.string().min(1).optional(),
  expires_in: z.number().int().positive().optional(),
});

const errorResponse = z.object({ error: z.string().min(1) });

const userResponse = z.object({
  id: z.union([z.number().int().nonnegative(), z.string().regex(/^\d+$/)]),
  login: z.string().min(1),
});

const emailsResponse = z.array(z.object({ email: z.string(), primary: z.boolean(), verified: z.boolean() }));

export function createGitHubProvider(config: GitHubProviderConfig, http: ProviderHTTPOptions): OAuthProvider {
  const apiHeaders = (accessToken: string): Record<string, string> => ({
    Authorization: `Bearer ${accessToken}`,
    Accept: 'application/vnd.github+json',
    'X-GitHub-Api-Version': '2022-11-28',
    'User-Agent': USER_AGENT,
  });

  const getAPI = async <T>(path: string, accessToken: string, schema: z.ZodType<T>): Promise<T> => {
    const { status, body } = await requestJSON(http, `${config.apiUrl}${path}`, { method: 'GET', headers: apiHeaders(accessToken) });
    if (status !== 200) throw new ProviderRequestError({ kind: 'unexpected_response', status }, `GitHub ${path} answered HTTP ${status}`);
    const parsed = schema.safeParse(body);
    if (!parsed.success) throw new ProviderRequestError({ kind: 'unexpected_response', status }, `GitHub ${path} answered an unexpected body`);
    return parsed.data;
  };

  return {
    id: 'github',
    displayName: 'GitHub',
    // GitHub marks an address verified only once its owner followed GitHub's confirmation link.
    trustsEmail: true,

    // GitHub is no OpenID provider: the nonce, the callback's `iss` and the clock play no part.
    async createAuthorizationURL({ state, codeChallenge, redirectUri }) {
      const url = new URL(`${config.authUrl}/authorize`);
      url.searchParams.set('client_id', config.clientId);
      url.searchParams.set('redirect_uri', redirectUri);
      url.searchParams.set('scope', GITHUB_SCOPES.join(' '));
      url.searchParams.set('state', state);
      url.searchParams.set('code_challenge', codeChallenge);
      url.searchParams.set('code_challenge_method', PKCE_METHOD);
      return url;
    },

    async exchangeCode({ code, codeVerifier, redirectUri }): Promise<ProviderTokens> {
      const { status, body } = await requestJSON(http, `${config.authUrl}/access_token`, {
        method: 'POST',
        headers: {
          Accept: 'application/json',
          'Content-Type': 'application/x-www-form-urlencoded',
          'User-Agent': USER_AGENT,
        },
        body: new URLSearchParams({
          client_id: config.clientId,
          client_secret: config.clientSecret,
          code,
          redirect_uri: redirectUri,
          code_verifier: codeVerifier,
        }).toString(),
      });
      // Any `error` is a failure whatever the status (GitHub: 200; RFC 6749 §5.2: 400).
      const failed = errorResponse.safeParse(body);
      if (failed.success) {
        const errorCode = toSafeErrorCode(failed.data.error);
        throw new ProviderRequestError({ kind: 'provider_error', code: errorCode }, `GitHub refused the code: ${errorCode}`);
      }
      const parsed = tokenResponse.safeParse(body);
      if (status !== 200 || !parsed.success) {
        throw new ProviderRequestError({ kind: 'unexpected_response', status }, `GitHub's token endpoint answered HTTP ${status} without an access token`);
      }
      return {
        accessToken: parsed.data.access_token,
        refreshToken: parsed.data.refresh_token ?? null,
        accessTokenExpiresInSeconds: parsed.data.expires_in ?? null,
        grantedScopes: (parsed.data.scope ?? '')
          .split(',')
          .map((s) => s.trim())
          .filter((s) => s.length > 0),
        idTokenClaims: null,
      };
    },

    async fetchProfile(tokens): Promise<ProviderProfile> {
      const [user, emails] = await Promise.all([getAPI('/user', tokens.accessToken, userResponse), getAPI('/user/emails', tokens.accessToken, emailsResponse)]);
      // GitHub refuses tokens to users whose primary email is unverified, but the flow does
      // not rely on that: it is told exactly what GitHub says.
      const primary = emails.find((entry) => entry.primary) ?? null;
      return {
        providerUserId: String(user.id),
        login: user.login,
        email: primary?.email.trim().toLowerCase() || null,
        emailVerified: primary?.verified === true,
      };
    },
  };
}
