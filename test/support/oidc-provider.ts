/**
 * A real OpenID Provider on loopback: panva's oidc-provider 9 (a certified implementation), with
 * its own RSA signing key made for this run, one confidential client, and accounts the test sets.
 * Gatehouse talks to it exactly as to Google or GitLab: discovery, the authorization endpoint, the
 * token endpoint with client_secret_basic and PKCE, the JWKS and the userinfo endpoint.
 *
 * The login and consent pages are replaced by one interaction handler that signs in the account
 * the test chose (`nextAccount`) and grants the requested scopes, so a test (or Chromium) passes
 * through without a form. `authorize()` plays the browser for tests that drive Gatehouse in
 * process: it follows the provider's redirects, with the provider's cookies, until the redirect
 * back to Gatehouse's callback.
 *
 * `claimsInIdToken: false` (oidc-provider's default, OpenID Connect Core §5.4 to the letter) puts
 * email and email_verified only in the userinfo answer; `true` puts them in the ID token too.
 */
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair } from 'jose';
import Provider from 'oidc-provider';

export interface OidcTestAccount {
  sub: string;
  email?: string;
  email_verified?: boolean;
  name?: string;
  preferred_username?: string;
}

export interface RealOidcProvider {
  readonly issuer: string;
  readonly clientId: string;
  readonly clientSecret: string;
  /** Paths requested so far (`/.well-known/openid-configuration`, `/token`, `/me`, …). */
  readonly requests: string[];
  /** The account the next interaction signs in. */
  nextAccount: OidcTestAccount;
  /**
   * Plays the browser at the provider: opens Gatehouse's authorization URL as `account` and
   * follows the redirects; returns the URL the provider sends the browser back to.
   */
  authorize(authorizationUrl: string, account: OidcTestAccount): Promise<URL>;
  close(): Promise<void>;
}

export async function startOidcProvider(options: { redirectUris: string[]; claimsInIdToken?: boolean }): Promise<RealOidcProvider> {
  const accounts = new Map<string, OidcTestAccount>();
  const requests: string[] = [];
  let provider: Provider | null = null;
  const clientId = `gatehouse-${randomBytes(4).toString('hex')}`;
  const clientSecret = randomBytes(24).toString('base64url');

  const server = http.createServer((request, response) => {
    requests.push(new URL(request.url ?? '/', 'http://x').pathname);
    void handle(request, response).catch((error: unknown) => {
      response.statusCode = 500;
      response.end(String(error));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  const signingKey = { ...(await exportJWK(privateKey)), kid: `test-${randomBytes(4).toString('hex')}`, alg: 'RS256', use: 'sig' };

  const created = new Provider(issuer, {
    clients: [
      {
        client_id: clientId,
        client_secret: clientSecret,
        redirect_uris: options.redirectUris,
        grant_types: ['authorization_code'],
        response_types: ['code'],
        token_endpoint_auth_method: 'client_secret_basic',
      },
    ],
    jwks: { keys: [signingKey] },
    cookies: { keys: [randomBytes(32).toString('hex')] },
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name', 'preferred_username'] },
    conformIdTokenClaims: !(options.claimsInIdToken ?? false),
    features: { devInteractions: { enabled: false } },
    interactions: { url: (_ctx: unknown, interaction: { uid: string }) => `/interaction/${interaction.uid}` },
    pkce: { required: () => true },
    // Set, not left to the defaults, which each print a notice when first used.
    ttl: { AccessToken: 3600, AuthorizationCode: 60, Grant: 600, IdToken: 3600, Interaction: 600, Session: 600 },
    async findAccount(_ctx: unknown, sub: string) {
      const account = accounts.get(sub);
      if (account === undefined) return undefined;
      return { accountId: sub, claims: async () => ({ ...account }) };
    },
  });
  created.on('server_error', () => {});
  provider = created;

  let nextAccount: OidcTestAccount = { sub: 'nobody' };

  async function handle(request: http.IncomingMessage, response: http.ServerResponse): Promise<void> {
    const op = provider!;
    if (request.url?.startsWith('/interaction/')) {
      const details = await op.interactionDetails(request, response);
      const account = nextAccount;
      accounts.set(account.sub, account);
      const grant = new op.Grant({ accountId: account.sub, clientId: String(details.params.client_id) });
      grant.addOIDCScope(String(details.params.scope));
      const grantId = await grant.save();
      await op.interactionFinished(request, response, { login: { accountId: account.sub }, consent: { grantId } }, { mergeWithLastSubmission: false });
      return;
    }
    await op.callback()(request, response);
  }

  return {
    issuer,
    clientId,
    clientSecret,
    requests,
    get nextAccount() {
      return nextAccount;
    },
    set nextAccount(account: OidcTestAccount) {
      nextAccount = account;
    },
    async authorize(authorizationUrl, account) {
      nextAccount = account;
      // A fresh browser each time: no provider session carries one sign-in into the next.
      const jar = new Map<string, string>();
      let url = new URL(authorizationUrl);
      for (let hop = 0; hop < 10; hop += 1) {
        if (url.origin !== issuer) return url;
        const response = await fetch(url, {
          redirect: 'manual',
          headers: { cookie: [...jar].map(([name, value]) => `${name}=${value}`).join('; ') },
        });
        for (const header of response.headers.getSetCookie()) {
          const [pair] = header.split(';');
          const [name, ...value] = pair!.split('=');
          if (/expires=Thu, 01 Jan 1970/i.test(header)) jar.delete(name!);
          else jar.set(name!, value.join('='));
        }
        const location = response.headers.get('location');
        if (location === null) throw new Error(`the provider answered ${response.status} at ${url.pathname}: ${await response.text()}`);
        url = new URL(location, url);
      }
      throw new Error('too many redirects at the provider');
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
