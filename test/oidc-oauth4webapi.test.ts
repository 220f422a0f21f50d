/**
 * Gatehouse as an OpenID Provider, driven by `oauth4webapi` 3, a strict client that checks every
 * answer against the specifications (issuer of the discovery document, RFC 9207's `iss` on the
 * redirect, ID token claims, nonce, token types, subjects). Its one option here is the one that
 * lets it speak http to a server on loopback; nothing else is relaxed, so a deviation from the
 * specifications fails a test. Each grant on each database: authorization code with PKCE S256
 * (confidential client with client_secret_basic, public client with none), userinfo, refresh with
 * rotation, client credentials, introspection and revocation, and RFC 8252's loopback redirects.
 */
import * as oauth from 'oauth4webapi';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { describeEachDialect } from './support/harness.js';
import { startGatehouseOp, type GatehouseOp, type Person, type RegisteredClient } from './support/gatehouse-op.js';

const APP = 'https://app.example.test/callback';
const LOOPBACK = 'http://127.0.0.1/callback';
// The issuer is http on loopback: the one switch there is, and the only one used.
const HTTP_ON_LOOPBACK = { [oauth.allowInsecureRequests]: true } as const;

describeEachDialect('OpenID Connect provider with oauth4webapi', (dialect) => {
  let op: GatehouseOp;
  let as: oauth.AuthorizationServer;
  let person: Person;

  beforeAll(async () => {
    op = await startGatehouseOp(dialect);
    const issuer = new URL(op.issuer());
    as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { algorithm: 'oidc', ...HTTP_ON_LOOPBACK }));
    person = await op.registerPerson();
  });
  afterAll(async () => {
    await op?.stop();
  });

  const clientOf = (registered: RegisteredClient): oauth.Client => ({ client_id: registered.clientId });
  const authOf = (registered: RegisteredClient): oauth.ClientAuth =>
    registered.clientSecret === undefined ? oauth.None() : oauth.ClientSecretBasic(registered.clientSecret);

  /** The authorization code grant end to end: PKCE S256, state, and a nonce when given. */
  async function codeGrant(registered: RegisteredClient, redirectUri: string, options: { scope?: string; nonce?: string } = {}) {
    const client = clientOf(registered);
    const codeVerifier = oauth.generateRandomCodeVerifier();
    const state = oauth.generateRandomState();
    const url = new URL(as.authorization_endpoint!);
    url.search = new URLSearchParams({
      client_id: client.client_id,
      redirect_uri: redirectUri,
      response_type: 'code',
      scope: options.scope ?? 'openid email offline_access',
      code_challenge: await oauth.calculatePKCECodeChallenge(codeVerifier),
      code_challenge_method: 'S256',
      state,
      prompt: 'consent',
      ...(options.nonce === undefined ? {} : { nonce: options.nonce }),
    }).toString();
    const back = await op.authorize(person, url);
    expect(back.origin + back.pathname).toBe(new URL(redirectUri).origin + new URL(redirectUri).pathname);
    const callbackParameters = oauth.validateAuthResponse(as, client, back, state);
    const response = await oauth.authorizationCodeGrantRequest(as, client, authOf(registered), callbackParameters, redirectUri, codeVerifier, HTTP_ON_LOOPBACK);
    // Without a nonce in the request, oauth4webapi requires there is none in the ID token.
    return oauth.processAuthorizationCodeResponse(as, client, response, options.nonce === undefined ? {} : { expectedNonce: options.nonce });
  }

  test('discovery: the document names this issuer, every endpoint under /oauth2/, PKCE S256 only', () => {
    expect(as.issuer).toBe(op.issuer());
    for (const endpoint of [
      as.authorization_endpoint,
      as.token_endpoint,
      as.userinfo_endpoint,
      as.jwks_uri,
      as.introspection_endpoint,
      as.revocation_endpoint,
    ]) {
      expect(endpoint).toMatch(new RegExp(`^${op.issuer()}/oauth2/`));
    }
    expect(as.code_challenge_methods_supported).toEqual(['S256']);
    expect(as.authorization_response_iss_parameter_supported).toBe(true);
  });

  test('confidential client: code with PKCE and a nonce, ID token checked, userinfo, refresh rotates', async () => {
    const registered = await op.registerClient({ name: 'Strict web app', redirectUris: [APP] });
    const client = clientOf(registered);
    const nonce = oauth.generateRandomNonce();
    const tokens = await codeGrant(registered, APP, { nonce });
    expect(tokens.token_type).toBe('bearer');
    const claims = oauth.getValidatedIdTokenClaims(tokens)!;
    expect(claims).toMatchObject({ iss: op.issuer(), aud: registered.clientId, sub: person.id, nonce });
    expect(claims.amr).toEqual(['pwd']);

    const userinfo = await oauth.processUserInfoResponse(as, client, person.id, await oauth.userInfoRequest(as, client, tokens.access_token, HTTP_ON_LOOPBACK));
    expect(userinfo).toMatchObject({ sub: person.id, email: person.email, email_verified: false });

    const refreshed = await oauth.processRefreshTokenResponse(
      as,
      client,
      await oauth.refreshTokenGrantRequest(as, client, authOf(registered), tokens.refresh_token!, HTTP_ON_LOOPBACK),
    );
    expect(refreshed.refresh_token).toBeTruthy();
    expect(refreshed.refresh_token).not.toBe(tokens.refresh_token);
    expect(refreshed.access_token).not.toBe(tokens.access_token);
    expect(oauth.getValidatedIdTokenClaims(refreshed)?.sub).toBe(person.id);
    // The rotated token is the one that works from now on.
    const again = await oauth.processRefreshTokenResponse(
      as,
      client,
      await oauth.refreshTokenGrantRequest(as, client, authOf(registered), refreshed.refresh_token!, HTTP_ON_LOOPBACK),
    );
    expect(again.refresh_token).not.toBe(refreshed.refresh_token);
  });

  test('public client: code with PKCE and no client authentication, no nonce, refresh', async () => {
    const registered = await op.registerClient({ name: 'Desktop app', public: true, redirectUris: [LOOPBACK] });
    expect(registered.clientSecret).toBeUndefined();
    const client = clientOf(registered);
    const tokens = await codeGrant(registered, LOOPBACK);
    expect(oauth.getValidatedIdTokenClaims(tokens)).toMatchObject({ sub: person.id, aud: registered.clientId });
    expect(oauth.getValidatedIdTokenClaims(tokens)?.nonce).toBeUndefined();
    const refreshed = await oauth.processRefreshTokenResponse(
      as,
      client,
      await oauth.refreshTokenGrantRequest(as, client, oauth.None(), tokens.refresh_token!, HTTP_ON_LOOPBACK),
    );
    expect(refreshed.refresh_token).not.toBe(tokens.refresh_token);
  });

  describe('redirect URIs', () => {
    test('a loopback redirect URI registered without a port matches at any port (RFC 8252)', async () => {
      const registered = await op.registerClient({ name: 'CLI tool', public: true, redirectUris: [LOOPBACK] });
      const tokens = await codeGrant(registered, 'http://127.0.0.1:5173/callback', { scope: 'openid' });
      expect(oauth.getValidatedIdTokenClaims(tokens)?.sub).toBe(person.id);
    });

    test('a web client with an https redirect URI gets no code for another port or path', async () => {
      const registered = await op.registerClient({ name: 'Web only', redirectUris: [APP] });
      const codeChallenge = await oauth.calculatePKCECodeChallenge(oauth.generateRandomCodeVerifier());
      for (const redirectUri of ['https://app.example.test:8443/callback', 'https://app.example.test/other']) {
        const url = new URL(as.authorization_endpoint!);
        url.search = new URLSearchParams({
          client_id: registered.clientId,
          redirect_uri: redirectUri,
          response_type: 'code',
          scope: 'openid',
          code_challenge: codeChallenge,
          code_challenge_method: 'S256',
          state: oauth.generateRandomState(),
        }).toString();
        const response = await fetch(url, { redirect: 'manual' });
        expect(response.status, redirectUri).toBe(400);
        expect(response.headers.get('location')).toBeNull();
        expect(((await response.json()) as { error: string }).error).toBe('invalid_redirect_uri');
      }
    });
  });

  test('client credentials, then introspection while the token lives and revocation ends it', async () => {
    const registered = await op.registerClient({ name: 'Batch job', grantTypes: ['client_credentials'] });
    const client = clientOf(registered);
    const auth = authOf(registered);
    const granted = await oauth.processClientCredentialsResponse(
      as,
      client,
      await oauth.clientCredentialsGrantRequest(as, client, auth, new URLSearchParams(), HTTP_ON_LOOPBACK),
    );
    expect(granted.token_type).toBe('bearer');
    expect(granted.refresh_token).toBeUndefined();
    const introspect = async () =>
      oauth.processIntrospectionResponse(as, client, await oauth.introspectionRequest(as, client, auth, granted.access_token, HTTP_ON_LOOPBACK));
    expect(await introspect()).toMatchObject({ active: true, client_id: registered.clientId, token_type: 'Bearer' });
    await oauth.processRevocationResponse(await oauth.revocationRequest(as, client, auth, granted.access_token, HTTP_ON_LOOPBACK));
    expect((await introspect()).active).toBe(false);
  });

  test("a person's tokens: the app introspects them, and revoking the refresh token ends the grant", async () => {
    const registered = await op.registerClient({ name: 'Revoking app', redirectUris: [APP] });
    const client = clientOf(registered);
    const auth = authOf(registered);
    const tokens = await codeGrant(registered, APP, { nonce: oauth.generateRandomNonce() });
    const introspect = async (token: string) =>
      oauth.processIntrospectionResponse(as, client, await oauth.introspectionRequest(as, client, auth, token, HTTP_ON_LOOPBACK));
    expect(await introspect(tokens.access_token)).toMatchObject({ active: true, sub: person.id, client_id: registered.clientId });
    expect(await introspect(tokens.refresh_token!)).toMatchObject({ active: true, sub: person.id, client_id: registered.clientId });
    await oauth.processRevocationResponse(await oauth.revocationRequest(as, client, auth, tokens.refresh_token!, HTTP_ON_LOOPBACK));
    expect((await introspect(tokens.refresh_token!)).active).toBe(false);
    expect((await introspect(tokens.access_token)).active).toBe(false);
    const refused = oauth
      .refreshTokenGrantRequest(as, client, auth, tokens.refresh_token!, HTTP_ON_LOOPBACK)
      .then((response) => oauth.processRefreshTokenResponse(as, client, response));
    await expect(refused).rejects.toMatchObject({ error: 'invalid_grant', status: 400 });
  });
});
