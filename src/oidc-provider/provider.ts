/**
 * @module The OpenID Connect engine, configured: panva's oidc-provider (OpenID Certified), never
 * hand-written OAuth. Issuer = BASE_URL, every endpoint under /oauth2/, discovery at
 * /.well-known/openid-configuration. Authorization code with PKCE S256 for every client, refresh
 * tokens rotated on each use (a reuse revokes the grant), client credentials; introspection and
 * revocation; JWT access tokens (RFC 9068) for the resource servers of OIDC_RESOURCES.
 *
 * Who is signed in is Gatehouse's session, not the engine's: the engine's own session cookie only
 * remembers which account it last saw, and a check added to its login prompt asks again whenever
 * Gatehouse's session cookie is missing, invalid or for another account — so signing out of
 * Gatehouse, or an operator revoking the session, ends single sign-on at once.
 */
import type Provider from 'oidc-provider';
import type { Configuration, KoaContextWithOIDC } from 'oidc-provider';
import type { JWK } from 'jose';
import { hexDigestsEqual, sha256Hex } from '../crypto/digest.js';
import type { User } from '../users/user.js';
import { createAdapter, type AdapterDeps } from './adapter.js';
import type { PageContextSettings } from '../web/page-context.js';
import { FIRST_PARTY } from './client-metadata.js';
import { devicePages, logoutPages, type DevicePageDeps } from './engine-pages.js';
import type { OidcProviderConfig } from './settings.js';

/** One organization in the `organizations` claim. */
export interface OrganizationClaim {
  id: string;
  slug: string;
  role: string;
  permissions: readonly string[];
}

/** The Gatehouse session behind a request's cookies, as the engine's checks need it. */
export interface SignedInAccount {
  userId: string;
  /** When that sign-in was made: the engine's session must have been told of this one. */
  signedInAt: Date;
}

export interface ProviderDeps {
  issuer: string;
  adapter: AdapterDeps;
  jwks: JWK[];
  /** Keys of the engine's signed cookies (derived from JWT_SECRET: the same on every instance). */
  cookieKeys: string[];
  secureCookies: boolean;
  settings: Readonly<OidcProviderConfig>;
  findUser(userId: string): Promise<User | null>;
  /** The `organizations` claim: the account's organizations with its role and the role's permissions in each. */
  organizationsOf(userId: string): Promise<OrganizationClaim[]>;
  /** Gatehouse's session of the request's cookie header; null when there is none that is valid. */
  signedInAccount(cookieHeader: string | undefined): Promise<SignedInAccount | null>;
  /** What the device grant's pages need to look like every other page. */
  pages: PageContextSettings;
  /** The grant an account gave a client in an earlier session (remembered consent); null when none. */
  rememberedGrantId(accountId: string, clientId: string): Promise<string | null>;
}

export const OIDC_ROUTES = {
  authorization: '/oauth2/authorize',
  token: '/oauth2/token',
  userinfo: '/oauth2/userinfo',
  jwks: '/oauth2/jwks',
  revocation: '/oauth2/revoke',
  introspection: '/oauth2/introspect',
  end_session: '/oauth2/end-session',
  // The person's page (verification_uri); the device's own endpoint stays under /oauth2/.
  code_verification: '/device',
  device_authorization: '/oauth2/device/auth',
  pushed_authorization_request: '/oauth2/par',
  backchannel_authentication: '/oauth2/backchannel',
  registration: '/oauth2/reg',
  challenge: '/oauth2/challenge',
} as const;

/** Where the engine sends a browser that must sign in or consent (interaction-routes.ts). */
export const INTERACTION_PATH = '/consent';

/**
 * The login prompt, plus: Gatehouse's session must be there, and be the very sign-in the engine
 * was told of (the account, and its time) — otherwise the engine's remembered `amr`, `acr` and
 * `auth_time` would describe an earlier sign-in, perhaps a stronger one since signed out.
 */
function interactionPolicyOf(oidc: OidcModule, deps: Pick<ProviderDeps, 'signedInAccount'>): ReturnType<OidcModule['interactionPolicy']['base']> {
  const { interactionPolicy } = oidc;
  const policy = interactionPolicy.base();
  const login = policy.get('login');
  login?.checks.add(
    new interactionPolicy.Check('gatehouse_session', 'the Gatehouse session ended or belongs to another account', 'login_required', async (ctx) => {
      const accountId = ctx.oidc.session?.accountId;
      if (accountId === undefined) return interactionPolicy.Check.NO_NEED_TO_PROMPT;
      const signedIn = await deps.signedInAccount(ctx.get('cookie') || undefined);
      const same = signedIn !== null && signedIn.userId === accountId && ctx.oidc.session?.loginTs === Math.floor(signedIn.signedInAt.getTime() / 1000);
      return same ? interactionPolicy.Check.NO_NEED_TO_PROMPT : interactionPolicy.Check.REQUEST_PROMPT;
    }),
  );
  login?.checks.add(
    new interactionPolicy.Check(MFA_REASON, 'the client asked for a second factor (acr_values=mfa)', 'login_required', (ctx) =>
      mfaRequested(ctx) && ctx.oidc.session?.acr !== 'mfa' ? interactionPolicy.Check.REQUEST_PROMPT : interactionPolicy.Check.NO_NEED_TO_PROMPT,
    ),
  );
  return policy;
}

/** The login prompt's reason when a client demands a second factor the session has not proven. */
export const MFA_REASON = 'gatehouse_mfa';

/** `acr_values` naming `mfa` (voluntary in OpenID Connect, a demand here), or `mfa` as an essential `acr` claim. */
function mfaRequested(ctx: KoaContextWithOIDC): boolean {
  const acrValues = ctx.oidc.params?.acr_values;
  if (typeof acrValues === 'string' && acrValues.split(' ').includes('mfa')) return true;
  const acr = ctx.oidc.claims?.id_token?.acr;
  return acr?.essential === true && (acr.value === 'mfa' || acr.values?.includes('mfa') === true);
}

/**
 * A first-party client gets the scopes it asks for without the consent page; any client finds the
 * grant of this session, or one the person gave it before (consent is remembered per client until
 * revoked on /account).
 */
async function loadExistingGrant(deps: Pick<ProviderDeps, 'rememberedGrantId'>, ctx: KoaContextWithOIDC) {
  const { oidc } = ctx;
  const client = oidc.client;
  const accountId = oidc.session?.accountId;
  if (client === undefined || accountId === undefined) return undefined;
  const grantId = oidc.result?.consent?.grantId ?? oidc.session?.grantIdFor(client.clientId) ?? (await deps.rememberedGrantId(accountId, client.clientId));
  const existing = grantId === null || grantId === undefined ? undefined : await oidc.provider.Grant.find(grantId);
  if (existing !== undefined && existing.accountId === accountId && existing.clientId === client.clientId) return existing;
  if ((client as unknown as Record<string, unknown>)[FIRST_PARTY] !== true) return undefined;
  const grant = new oidc.provider.Grant({ accountId, clientId: client.clientId });
  grant.addOIDCScope([...oidc.requestParamScopes].join(' '));
  const resource = oidc.params?.resource;
  if (typeof resource === 'string') grant.addResourceScope(resource, [...oidc.requestParamScopes].join(' '));
  await grant.save();
  return grant;
}

/**
 * Which claims each scope gives. How and when the person signed in go with `openid` into every ID
 * token (the engine's values for them, not the account's); the standalone ones may also be asked
 * for with `claims`.
 */
const CLAIMS: NonNullable<Configuration['claims']> = {
  acr: null,
  amr: null,
  auth_time: null,
  sid: null,
  iss: null,
  openid: ['sub', 'auth_time', 'amr', 'acr'],
  email: ['email', 'email_verified'],
  organizations: ['organizations'],
};

/** The engine's account: Gatehouse's user (none when disabled or gone), and its claims. */
function findAccountOf(deps: Pick<ProviderDeps, 'findUser' | 'organizationsOf'>): Configuration['findAccount'] {
  return async (_ctx, sub) => {
    const user = await deps.findUser(sub);
    if (user === null || user.disabledAt !== null) return undefined;
    return {
      accountId: user.id,
      // Memberships are read only for a token whose scope names them, at the moment it is issued.
      claims: async (_use, scope) => ({
        sub: user.id,
        email: user.email ?? undefined,
        email_verified: user.emailVerified,
        ...(scope.split(' ').includes('organizations') ? { organizations: await deps.organizationsOf(user.id) } : {}),
      }),
    };
  };
}

/** The engine's features: the device grant, introspection, revocation, client credentials, RP-initiated logout, resource indicators. */
function featuresOf(oidc: OidcModule, settings: Readonly<OidcProviderConfig>, pages: DevicePageDeps): NonNullable<Configuration['features']> {
  const { errors } = oidc;
  return {
    // RFC 8628: a TV or a command-line tool shows a code the person enters at /device.
    deviceFlow: { enabled: true, charset: 'base-20', mask: '****-****', ...devicePages(pages) },
    devInteractions: { enabled: false },
    // Introspection is for confidential clients (an API checking the tokens it is shown); a public
    // client learns nothing from it. Revocation: any client, its own tokens only.
    introspection: { enabled: true, allowedPolicy: async (_ctx, client) => client.clientAuthMethod !== 'none' },
    revocation: {
      enabled: true,
      allowedPolicy: async (_ctx, client, token) => {
        if (token.clientId === client.clientId) return true;
        if (client.clientAuthMethod === 'none') return false;
        throw new errors.InvalidRequest('client is not authorized to revoke the presented token');
      },
    },
    clientCredentials: { enabled: true },
    // Not offered: every request would store a record, and no client here needs it.
    pushedAuthorizationRequests: { enabled: false },
    rpInitiatedLogout: { enabled: true, ...logoutPages(pages) },
    // Back-channel logout tokens are queued and sent by Gatehouse's own worker (logout-worker.ts), with retries.
    backchannelLogout: { enabled: true },
    resourceIndicators: {
      enabled: true,
      defaultResource: () => undefined,
      useGrantedResource: () => true,
      getResourceServerInfo: (_ctx, resource) => {
        if (!settings.resources.includes(resource)) throw new errors.InvalidTarget();
        return {
          scope: 'openid email organizations offline_access',
          audience: resource,
          accessTokenTTL: settings.accessTokenTtlSeconds,
          accessTokenFormat: 'jwt',
          jwt: { sign: { alg: 'ES256' } },
        };
      },
    },
  };
}

function configurationOf(oidc: OidcModule, deps: ProviderDeps): Configuration {
  const { settings } = deps;
  const cookie = { signed: true, secure: deps.secureCookies, sameSite: 'lax' as const, httpOnly: true };
  return {
    adapter: (name: string) => createAdapter(deps.adapter, name, (what) => new oidc.errors.InvalidGrant(`${what} already used`)),
    clients: [],
    jwks: { keys: deps.jwks },
    cookies: {
      keys: deps.cookieKeys,
      long: cookie,
      short: cookie,
      names: { session: 'gatehouse_op', interaction: 'gatehouse_op_interaction', resume: 'gatehouse_op_resume' },
    },
    claims: CLAIMS,
    // The claims of the scopes given go into the ID token too, not only userinfo: an app reads the
    // person's organizations and roles from the token it verifies, without a second request.
    conformIdTokenClaims: false,
    acrValues: ['mfa'],
    scopes: ['openid', 'email', 'offline_access', 'organizations'],
    responseTypes: ['code'],
    pkce: { required: () => true },
    clientAuthMethods: ['none', 'client_secret_basic', 'client_secret_post'],
    clientDefaults: {
      id_token_signed_response_alg: 'ES256',
      grant_types: ['authorization_code'],
      response_types: ['code'],
      token_endpoint_auth_method: 'client_secret_basic',
    },
    enabledJWA: {
      idTokenSigningAlgValues: ['ES256', 'RS256'],
      userinfoSigningAlgValues: ['ES256', 'RS256'],
      introspectionSigningAlgValues: ['ES256', 'RS256'],
      authorizationSigningAlgValues: ['ES256', 'RS256'],
    },
    extraClientMetadata: { properties: [FIRST_PARTY] },
    findAccount: findAccountOf(deps),
    features: featuresOf(oidc, settings, { issuer: deps.issuer, page: deps.pages }),
    // A browser app (an SPA) may call the token and userinfo endpoints from its own origin, the one it registered a redirect URI on.
    clientBasedCORS: (ctx, origin, client) => {
      if (origin === 'null') return false;
      if (ctx.oidc.route !== 'userinfo' && client.clientAuthMethod !== 'none') return false;
      return (client.redirectUris ?? []).some((uri) => URL.canParse(uri) && new URL(uri).origin === origin);
    },
    routes: OIDC_ROUTES,
    interactions: { url: (_ctx, interaction) => `${INTERACTION_PATH}/${interaction.uid}`, policy: interactionPolicyOf(oidc, deps) },
    ttl: {
      AccessToken: settings.accessTokenTtlSeconds,
      ClientCredentials: settings.accessTokenTtlSeconds,
      AuthorizationCode: 60,
      IdToken: settings.idTokenTtlSeconds,
      RefreshToken: settings.refreshTokenTtlSeconds,
      // A person's consent lasts until they (or an account change) revoke it; each refresh token has its own lifetime.
      Grant: 10 * 365 * 24 * 60 * 60,
      Interaction: 60 * 60,
      Session: 14 * 24 * 60 * 60,
    },
    // The engine's one outbound request here is a back-channel logout at RP-initiated logout: the
    // logout worker sends every one of those (queued when the Gatehouse session ends), so the
    // engine's own is answered at once without leaving the process. Nothing else may go out.
    fetch: async (_url, options) => {
      if (String(options?.body ?? '').startsWith('logout_token=')) return new Response(null, { status: 204 });
      throw new Error('the OpenID Connect engine makes no outbound requests');
    },
    rotateRefreshToken: true,
    issueRefreshToken: async (_ctx, client, code) => client.grantTypeAllowed('refresh_token') && code.scopes.has('offline_access'),
    loadExistingGrant: (ctx) => loadExistingGrant(deps, ctx),
    // An access token for the organizations scope carries them too: in a JWT for an API of
    // OIDC_RESOURCES, and in introspection's answer for an opaque one.
    extraTokenClaims: async (_ctx, token) => {
      const accountId = 'accountId' in token ? token.accountId : undefined;
      if (
        typeof accountId !== 'string' ||
        !String(token.scope ?? '')
          .split(' ')
          .includes('organizations')
      )
        return undefined;
      return { organizations: await deps.organizationsOf(accountId) };
    },
    // What the engine cannot send back to the app (an unknown client, a redirect URI that does not
    // match): the OAuth error as JSON, never a redirect to the address it could not trust.
    renderError: async (ctx, out) => {
      ctx.type = 'application/json; charset=utf-8';
      ctx.body = JSON.stringify(out);
    },
  };
}

/** The engine's module: loaded on the first request that needs it, so commands that never serve a token never load it. */
type OidcModule = typeof import('oidc-provider');

/**
 * A configured engine; `proxy` when Gatehouse stands behind proxies it trusts (TRUST_PROXY). On a
 * Node.js older than the engine's supported releases (22 LTS and later) it prints a warning of its
 * own when loaded.
 */
export async function createProvider(deps: ProviderDeps, options: { trustProxy: boolean }): Promise<Provider> {
  const oidc = await import('oidc-provider');
  const provider = new oidc.default(deps.issuer, configurationOf(oidc, deps));
  provider.proxy = options.trustProxy;
  // A client's `client_secret` is the SHA-256 of its secret (client-metadata.ts): compare hashes.
  provider.Client.prototype.compareClientSecret = function compareHashedSecret(this: { clientSecret?: string }, actual: string) {
    return Promise.resolve(typeof this.clientSecret === 'string' && hexDigestsEqual(sha256Hex(actual), this.clientSecret));
  };
  return provider;
}
