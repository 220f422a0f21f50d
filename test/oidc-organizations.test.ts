/**
 * The `organizations` scope of Gatehouse as an OpenID Provider, driven by `oauth4webapi` on each
 * database: the claim `organizations: [{ id, slug, role, permissions }]` in the ID token, at
 * userinfo and in introspection's answer, read when the token is issued (a role changed shows at
 * the next refresh); and a member removed from an organization loses the app grants whose tokens
 * named their organizations — their refresh token is refused and their access token inactive at
 * once — while a grant without that scope lives on.
 */
import { createRemoteJWKSet, jwtVerify } from 'jose';
import * as oauth from 'oauth4webapi';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { STRONG_PASSWORD, describeEachDialect } from './support/harness.js';
import { OP_RESOURCE, startGatehouseOp, type GatehouseOp, type Person, type RegisteredClient } from './support/gatehouse-op.js';

const APP = 'https://app.example.test/callback';
const HTTP_ON_LOOPBACK = { [oauth.allowInsecureRequests]: true } as const;

describeEachDialect('OpenID Connect provider: the organizations scope', (dialect) => {
  let op: GatehouseOp;
  let as: oauth.AuthorizationServer;

  beforeAll(async () => {
    op = await startGatehouseOp(dialect);
    const issuer = new URL(op.issuer());
    as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { algorithm: 'oidc', ...HTTP_ON_LOOPBACK }));
  });
  afterAll(async () => {
    await op?.stop();
  });

  /** The person's API session (the pages' cookie), for the /api/orgs calls an app's user makes. */
  async function apiSession(
    person: Person,
  ): Promise<(method: string, path: string, json?: unknown) => Promise<{ status: number; body: Record<string, unknown> }>> {
    const login = await fetch(`${op.issuer()}/api/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: op.issuer() },
      body: JSON.stringify({ email: person.email, password: STRONG_PASSWORD }),
    });
    expect(login.status).toBe(200);
    const cookie = login.headers
      .getSetCookie()
      .map((header) => header.split(';')[0])
      .join('; ');
    return async (method, path, json) => {
      const response = await fetch(`${op.issuer()}${path}`, {
        method,
        headers: { cookie, origin: op.issuer(), ...(json === undefined ? {} : { 'content-type': 'application/json' }) },
        ...(json === undefined ? {} : { body: JSON.stringify(json) }),
      });
      return { status: response.status, body: (await response.json()) as Record<string, unknown> };
    };
  }

  async function codeGrant(person: Person, registered: RegisteredClient, scope: string, resource?: string): Promise<oauth.TokenEndpointResponse> {
    const client = { client_id: registered.clientId };
    const codeVerifier = oauth.generateRandomCodeVerifier();
    const state = oauth.generateRandomState();
    const url = new URL(as.authorization_endpoint!);
    url.search = new URLSearchParams({
      client_id: client.client_id,
      redirect_uri: APP,
      response_type: 'code',
      scope,
      code_challenge: await oauth.calculatePKCECodeChallenge(codeVerifier),
      code_challenge_method: 'S256',
      state,
      prompt: 'consent',
      ...(resource === undefined ? {} : { resource }),
    }).toString();
    const back = await op.authorize(person, url);
    const parameters = oauth.validateAuthResponse(as, client, back, state);
    const auth = oauth.ClientSecretBasic(registered.clientSecret!);
    const response = await oauth.authorizationCodeGrantRequest(as, client, auth, parameters, APP, codeVerifier, HTTP_ON_LOOPBACK);
    return oauth.processAuthorizationCodeResponse(as, client, response);
  }

  async function introspect(registered: RegisteredClient, token: string): Promise<oauth.IntrospectionResponse> {
    const client = { client_id: registered.clientId };
    const auth = oauth.ClientSecretBasic(registered.clientSecret!);
    return oauth.processIntrospectionResponse(as, client, await oauth.introspectionRequest(as, client, auth, token, HTTP_ON_LOOPBACK));
  }

  test('the claim in the ID token, userinfo and introspection; a removed member loses the grants that named it', async () => {
    expect(as.scopes_supported).toContain('organizations');
    const owner = await op.registerPerson();
    const member = await op.registerPerson();
    // Inviting and accepting need verified addresses: each follows the verification link first.
    for (const someone of [owner, member]) {
      const verification = (await op.sentEmails()).find((sent) => sent.to === someone.email)!;
      const verifyToken = /verify-email\?token=(\S+)/.exec(verification.text)![1]!;
      const verified = await fetch(`${op.issuer()}/api/auth/verify-email`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', origin: op.issuer() },
        body: JSON.stringify({ token: decodeURIComponent(verifyToken) }),
      });
      expect(verified.status).toBe(200);
    }
    const asOwner = await apiSession(owner);
    const asMember = await apiSession(member);
    const created = await asOwner('POST', '/api/orgs', { name: 'Acme', slug: `acme-${dialect}` });
    const organization = created.body.organization as { id: string; slug: string };
    const invited = await asOwner('POST', `/api/orgs/${organization.id}/invitations`, { email: member.email, role: 'admin' });
    expect(invited.status).toBe(201);
    const email = (await op.sentEmails()).find((sent) => sent.to === member.email && sent.text.includes('/accept-invitation'))!;
    const link = /accept-invitation\?token=(\S+)/.exec(email.text)![1]!;
    expect((await asMember('POST', '/api/orgs/invitations/accept', { token: decodeURIComponent(link) })).status).toBe(200);

    const app = await op.registerClient({ name: 'Team app', redirectUris: [APP] });
    const other = await op.registerClient({ name: 'Other app', redirectUris: [APP] });
    const tokens = await codeGrant(member, app, 'openid email organizations offline_access');
    const expected = [{ id: organization.id, slug: organization.slug, role: 'admin', permissions: [] }];
    expect(oauth.getValidatedIdTokenClaims(tokens)).toMatchObject({ sub: member.id, organizations: expected });
    const client = { client_id: app.clientId };
    const auth = oauth.ClientSecretBasic(app.clientSecret!);
    const userinfo = await oauth.processUserInfoResponse(as, client, member.id, await oauth.userInfoRequest(as, client, tokens.access_token, HTTP_ON_LOOPBACK));
    expect(userinfo.organizations).toEqual(expected);
    expect((await introspect(app, tokens.access_token)).organizations).toEqual(expected);
    // An access token for an API of OIDC_RESOURCES is a JWT that carries them, verified with the JWKS alone.
    const forApi = await codeGrant(member, app, 'openid organizations', OP_RESOURCE);
    const jwks = createRemoteJWKSet(new URL(`${op.issuer()}/oauth2/jwks`));
    const { payload } = await jwtVerify(forApi.access_token, jwks, { issuer: op.issuer(), audience: OP_RESOURCE });
    expect(payload.organizations).toEqual(expected);
    // Without the scope, no claim and no membership read.
    const plain = await codeGrant(member, other, 'openid email offline_access');
    expect(oauth.getValidatedIdTokenClaims(plain)?.organizations).toBeUndefined();

    // A role changed shows in the tokens issued after it.
    expect((await asOwner('PATCH', `/api/orgs/${organization.id}/members/${member.id}`, { role: 'member' })).status).toBe(200);
    const refreshed = await oauth.processRefreshTokenResponse(
      as,
      client,
      await oauth.refreshTokenGrantRequest(as, client, auth, tokens.refresh_token!, HTTP_ON_LOOPBACK),
    );
    expect(oauth.getValidatedIdTokenClaims(refreshed)?.organizations).toEqual([{ ...expected[0], role: 'member' }]);

    // Removed: the grant that named the organization goes, with its tokens; the other app's stays.
    expect((await asOwner('DELETE', `/api/orgs/${organization.id}/members/${member.id}`)).status).toBe(200);
    expect((await introspect(app, refreshed.access_token)).active).toBe(false);
    const refused = await oauth.refreshTokenGrantRequest(as, client, auth, refreshed.refresh_token!, HTTP_ON_LOOPBACK);
    expect(refused.status).toBe(400);
    expect(((await refused.json()) as { error: string }).error).toBe('invalid_grant');
    expect((await introspect(other, plain.access_token)).active).toBe(true);
    const otherClient = { client_id: other.clientId };
    const stillWorks = await oauth.refreshTokenGrantRequest(
      as,
      otherClient,
      oauth.ClientSecretBasic(other.clientSecret!),
      plain.refresh_token!,
      HTTP_ON_LOOPBACK,
    );
    expect(stillWorks.status).toBe(200);
    expect(JSON.stringify(await asMember('GET', '/api/orgs'))).not.toContain(organization.id);
  });
});
