/**
 * @module Gatehouse as an OpenID Connect provider, as a capability: the engine under /oauth2/ and
 * the discovery documents (served on Node's request objects: engine.ts), the sign-in and consent
 * steps (`/consent/:uid`), the admin API's clients (mounted only with ADMIN_API_KEY), the
 * `gatehouse clients` and `gatehouse keys` commands, tokens issued counted by grant type, and the
 * sweep of expired records. Without an envelope key (ENCRYPTION_KEY_BASE64, or outside production
 * the generated one) there is no engine: its signing keys could not be kept sealed.
 */
import { membershipsOf } from '../organizations/memberships.js';
import { parse as parseCookies } from 'hono/utils/cookie';
import type Provider from 'oidc-provider';
import { adminKeyCheck } from '../admin/routes.js';
import { defineCapability } from '../capability.js';
import { createEnvelope, type Envelope } from '../crypto/envelope.js';
import { deriveKey } from '../crypto/mac.js';
import { createOidcClientStore } from '../db/oidc-client-store.js';
import { createOidcKeyStore } from '../db/oidc-key-store.js';
import { createLogoutNoticeStore } from '../db/oidc-logout-store.js';
import { createOidcRecordStore } from '../db/oidc-record-store.js';
import { securityHeaders } from '../http/security-headers.js';
import type { SharedParts } from '../parts.js';
import { validateSessionToken } from '../session/flow.js';
import { pageSettingsOf } from '../web/routes.js';
import { clientRouteDocs, createClientRoutes } from './admin-routes.js';
import { oidcProviderLine } from './banner.js';
import { OIDC_COMMANDS } from './cli.js';
import type { ClientAdminDeps } from './clients.js';
import { createEngine } from './engine.js';
import { createGrantRoutes, grantRouteDocs, type GrantRouteDeps } from './grant-routes.js';
import { createInteractionRoutes } from './interaction-routes.js';
import { firstPartyOfflineAccess } from './first-party.js';
import { endGatehouseSessionOnLogout } from './logout.js';
import { NOTICE_RETENTION_MS, createLogoutWorker } from './logout-worker.js';
import { createOidcMetrics, type OidcMetrics } from './metrics.js';
import type { ProviderDeps } from './provider.js';
import type { OidcClientStore, OidcRecordStore } from './store.js';

/** The engine's own answers: JSON and redirects, and its few HTML pages (logout confirmation, form_post). */
const ENGINE_CONTENT_SECURITY_POLICY = "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; base-uri 'none'; frame-ancestors 'none'";

export const oidcProvider = defineCapability({
  name: 'oidcProvider',
  routeDocs: [
    { prefix: '/api/auth', docs: grantRouteDocs },
    { prefix: '/api/admin', docs: clientRouteDocs },
  ],
  commands: OIDC_COMMANDS,
  build: (
    parts: Pick<SharedParts, 'config' | 'database' | 'stores' | 'limits' | 'random' | 'clock' | 'logger' | 'metrics' | 'session' | 'cookie' | 'jwtSecret'>,
  ) => {
    const { config, clock } = parts;
    const keys = config.encryptionKeys.length > 0 ? config.encryptionKeys : config.generatedEncryptionKey !== null ? [config.generatedEncryptionKey] : [];
    const envelope = keys.length > 0 ? createEnvelope(keys) : null;
    const records = createOidcRecordStore(parts.database.kysely);
    const clients = createOidcClientStore(parts.database.kysely);
    const clientDeps: ClientAdminDeps = { clients, stores: parts.stores, random: parts.random, production: config.mode === 'production' };
    const adminRoutes =
      config.adminApiKey === null
        ? []
        : [
            {
              prefix: '/api/admin',
              routes: createClientRoutes({ clients: clientDeps, requireAdminKey: adminKeyCheck({ apiKey: config.adminApiKey, limits: parts.limits }) }),
            },
          ];
    const notices = createLogoutNoticeStore(parts.database.kysely);
    const sweep = async (now: Date) => ({
      oidcRecords: await records.sweepExpiredRecords(now),
      oidcLogoutNotices: await notices.sweepNotices(new Date(now.getTime() - NOTICE_RETENTION_MS)),
    });
    const startLines = async () => [oidcProviderLine(config, envelope !== null, await clients.countClients())];
    const grantRoutes = (grants: GrantRouteDeps['grants']) => ({
      prefix: '/api/auth',
      routes: createGrantRoutes({ grants, session: parts.session, cookie: parts.cookie }),
    });
    if (envelope === null) return { routes: [grantRoutes(null), ...adminRoutes], sweep, startLines };

    const metrics = createOidcMetrics();
    parts.metrics.extend(metrics);
    const engine = createEngine({
      keys: createOidcKeyStore(parts.database.kysely),
      envelope,
      clock,
      limits: parts.limits,
      trustProxyHops: config.trustProxyHops,
      securityHeaders: securityHeaders({ contentSecurityPolicy: ENGINE_CONTENT_SECURITY_POLICY, httpsBaseUrl: config.httpsBaseUrl }),
      onBuilt: (provider) => watchEngine(provider, parts, metrics),
      middleware: [
        endGatehouseSessionOnLogout({ session: parts.session, cookie: parts.cookie, stores: parts.stores, clock }),
        firstPartyOfflineAccess(clients),
      ],
      provider: engineDeps(parts, { records, clients, envelope }),
    });
    const interactions = createInteractionRoutes({
      provider: engine.provider,
      session: parts.session,
      cookie: parts.cookie,
      stores: parts.stores,
      page: pageSettingsOf(config),
      httpsBaseUrl: config.httpsBaseUrl,
      markerKey: deriveKey(parts.jwtSecret, 'gatehouse oidc-provider fresh sign-in'),
    });
    const worker = createLogoutWorker({
      notices,
      clients,
      provider: engine.provider,
      send: { timeoutMs: config.webhooks.timeoutMs, requireHttps: config.webhooks.requireHttps, allowPrivateNetworks: config.webhooks.allowPrivateNetworks },
      clock,
      logger: parts.logger,
    });
    return {
      routes: [{ prefix: '/', routes: interactions }, grantRoutes({ records, clients, envelope, stores: parts.stores }), ...adminRoutes],
      sweep,
      startLines,
      worker,
      nodeRoute: engine.nodeRoute,
    };
  },
});

/** Counts tokens issued, audits a refresh token used again (its grant is revoked), logs the engine's own faults. */
function watchEngine(provider: Provider, parts: Pick<SharedParts, 'stores' | 'clock' | 'logger'>, metrics: OidcMetrics): void {
  const { clock } = parts;
  provider.on('grant.success', (ctx) => metrics.tokenIssued(String(ctx.oidc.params?.grant_type ?? 'unknown')));
  provider.on('grant.revoked', (ctx, grantId) => {
    // The engine revokes a grant at the token endpoint only when a used refresh token (or code) comes back.
    if (ctx.oidc.route !== 'token' || ctx.oidc.params?.grant_type !== 'refresh_token') return;
    void parts.stores.audit
      .recordEvent({
        type: 'oidc_refresh_reuse',
        userId: ctx.oidc.entities.RefreshToken?.accountId ?? null,
        ip: ctx.ip,
        userAgent: ctx.get('user-agent') || null,
        metadata: { clientId: ctx.oidc.client?.clientId ?? null, grantId },
        at: clock.now(),
      })
      .catch((error: unknown) => parts.logger.warn({ err: error }, 'could not record a refresh token reuse'));
  });
  provider.on('server_error', (_ctx, error) => parts.logger.error({ err: error }, 'OpenID Connect provider error'));
}

/** What the engine's configuration needs from the shared parts: the issuer, storage, cookies, the account and Gatehouse's session. */
function engineDeps(
  parts: Pick<SharedParts, 'config' | 'clock' | 'stores' | 'session' | 'cookie' | 'jwtSecret'>,
  storage: { records: OidcRecordStore; clients: OidcClientStore; envelope: Envelope },
): Omit<ProviderDeps, 'jwks'> {
  const { config, clock } = parts;
  const { records, clients, envelope } = storage;
  return {
    issuer: config.baseUrl,
    adapter: { records, clients, envelope, clock, refreshGraceSeconds: config.oidcProvider.refreshGraceSeconds },
    cookieKeys: [Buffer.from(deriveKey(parts.jwtSecret, 'gatehouse oidc-provider cookies')).toString('base64url')],
    secureCookies: config.httpsBaseUrl,
    settings: config.oidcProvider,
    pages: pageSettingsOf(config),
    findUser: (userId) => parts.stores.users.findUserById(userId),
    organizationsOf: async (userId) =>
      (await membershipsOf(parts.stores.organizations, config.organizationRoles, userId)).map(({ id, slug, role, permissions }) => ({
        id,
        slug,
        role,
        permissions,
      })),
    async signedInAccount(cookieHeader) {
      const token = cookieHeader === undefined ? undefined : parseCookies(cookieHeader, parts.cookie.name)[parts.cookie.name];
      if (token === undefined) return null;
      const valid = await validateSessionToken(parts.session, token, clock.now());
      return valid === null ? null : { userId: valid.user.id, signedInAt: valid.session.createdAt };
    },
    async rememberedGrantId(accountId, clientId) {
      const grants = await records.listGrantsOfAccount(accountId, clock.now());
      return grants.filter((grant) => grant.clientId === clientId).at(-1)?.grantId ?? null;
    },
  };
}
