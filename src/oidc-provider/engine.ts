/**
 * @module The running engine: built on the first request that needs it (its signing keys are read
 * from the database, and made at the first start), and built again when the keys change — a
 * rotation made by `gatehouse keys` on any machine is used here within 30 s. Requests under
 * /oauth2/ and the discovery documents are handed to it on Node's request objects, with the
 * limits of RATE_LIMIT_OIDC_TOKEN and RATE_LIMIT_OIDC_AUTHORIZE counted first.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type Provider from 'oidc-provider';
import type { KoaContextWithOIDC } from 'oidc-provider';
import type { Clock } from '../clock.js';
import type { Envelope } from '../crypto/envelope.js';
import { AppError } from '../errors.js';
import { resolveClientIp } from '../http/client-ip.js';
import type { RateLimits } from '../limits/rate-limits.js';
import { SIGNING_ALGS, activeJwks, ensureSigningKeys, keySetFingerprint } from './keys.js';
import { createProvider, type ProviderDeps } from './provider.js';
import type { OidcKeyStore } from './store.js';

/** How often a running engine looks for rotated keys. */
export const KEY_CHECK_INTERVAL_MS = 30_000;

export interface EngineDeps {
  keys: OidcKeyStore;
  envelope: Envelope;
  clock: Clock;
  limits: RateLimits;
  trustProxyHops: number;
  /** Everything the engine's configuration needs but its keys. */
  provider: Omit<ProviderDeps, 'jwks'>;
  /** Told of each engine built (events: metrics and audit rows). */
  onBuilt: (provider: Provider) => void;
  /** Middleware around the engine's own, after the limits (RP-initiated logout's end of the Gatehouse session). */
  middleware: readonly ((ctx: KoaContextWithOIDC, next: () => Promise<void>) => Promise<void>)[];
  securityHeaders: ReadonlyArray<[string, string]>;
}

export interface Engine {
  provider(): Promise<Provider>;
  /** The handler for a raw request target, or null when it is not the engine's. */
  nodeRoute(url: string): ((incoming: IncomingMessage, outgoing: ServerResponse) => Promise<void>) | null;
}

const DISCOVERY = '/.well-known/openid-configuration';
const AUTHORIZATION_SERVER_METADATA = '/.well-known/oauth-authorization-server';
/** Counted by RATE_LIMIT_OIDC_TOKEN: what a client's back end calls (the device's own request too). */
const TOKEN_PATHS = ['/oauth2/token', '/oauth2/introspect', '/oauth2/revoke', '/oauth2/device/auth'];

/** The device grant's page: `/device`, its `/device/…` steps, with or without a query. */
function isDevicePage(url: string): boolean {
  return url.startsWith('/device') && (url.length === 7 || url[7] === '/' || url[7] === '?');
}

/** The client id of an HTTP Basic authorization header, for the per-client limit; null without one. */
function basicClientId(header: string | undefined): string | null {
  if (header === undefined || !header.toLowerCase().startsWith('basic ')) return null;
  const decoded = Buffer.from(header.slice(6), 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon <= 0) return null;
  try {
    return decodeURIComponent(decoded.slice(0, colon));
  } catch {
    return null;
  }
}

interface Built {
  provider: Provider;
  handler: ReturnType<Provider['callback']>;
  fingerprint: string;
  checkedAt: number;
}

export function createEngine(deps: EngineDeps): Engine {
  let current: Built | null = null;
  let building: Promise<Built> | null = null;

  const build = async (): Promise<Built> => {
    const now = deps.clock.now();
    let keys = await deps.keys.listKeys();
    // Each algorithm needs a key (the first start; or every key of one was retired meanwhile).
    if (SIGNING_ALGS.some((alg) => !keys.some((key) => key.alg === alg && key.retiredAt === null))) {
      await ensureSigningKeys(deps.keys, deps.envelope, now);
      keys = await deps.keys.listKeys();
    }
    const fingerprint = keySetFingerprint(keys, now);
    if (current !== null && current.fingerprint === fingerprint) {
      current.checkedAt = now.getTime();
      return current;
    }
    const provider = await createProvider({ ...deps.provider, jwks: activeJwks(keys, deps.envelope, now) }, { trustProxy: deps.trustProxyHops > 0 });
    provider.use(limitsMiddleware(deps));
    for (const middleware of deps.middleware) provider.use(middleware);
    deps.onBuilt(provider);
    current = { provider, handler: provider.callback(), fingerprint, checkedAt: now.getTime() };
    return current;
  };

  const built = (): Promise<Built> => {
    if (current !== null && deps.clock.now().getTime() - current.checkedAt < KEY_CHECK_INTERVAL_MS) return Promise.resolve(current);
    building ??= build().finally(() => {
      building = null;
    });
    return building;
  };

  const handle = async (incoming: IncomingMessage, outgoing: ServerResponse): Promise<void> => {
    // RFC 8414's document is the same metadata as OpenID Connect's discovery.
    if (incoming.url?.startsWith(AUTHORIZATION_SERVER_METADATA) === true) incoming.url = DISCOVERY + incoming.url.slice(AUTHORIZATION_SERVER_METADATA.length);
    for (const [name, value] of deps.securityHeaders) outgoing.setHeader(name, value);
    const { handler } = await built();
    await handler(incoming, outgoing);
  };

  return {
    provider: async () => (await built()).provider,
    nodeRoute: (url) =>
      url.startsWith('/oauth2/') || url.startsWith(DISCOVERY) || url.startsWith(AUTHORIZATION_SERVER_METADATA) || isDevicePage(url) ? handle : null,
  };
}

/**
 * Counts the token endpoints per IP and per client, and the authorization endpoint per IP; a
 * refusal is the JSON 429. A client is counted once it has authenticated (after the engine
 * answered), never by the name an unauthenticated request gives — or anyone could spend another
 * client's budget; a client past its budget is refused before the engine when it names itself in
 * an HTTP Basic header.
 */
function limitsMiddleware(deps: Pick<EngineDeps, 'limits' | 'clock' | 'trustProxyHops'>) {
  return async (ctx: KoaContextWithOIDC, next: () => Promise<void>): Promise<void> => {
    const path = ctx.path;
    const token = TOKEN_PATHS.includes(path);
    if (!token && path !== '/oauth2/authorize') return next();
    const ip = resolveClientIp({
      remoteAddress: ctx.req.socket.remoteAddress,
      readForwardedFor: () => ctx.get('x-forwarded-for') || undefined,
      trustProxyHops: deps.trustProxyHops,
    });
    const now = deps.clock.now();
    try {
      if (!token) await deps.limits.consume('oidcAuthorize', { ip }, now);
      else {
        await deps.limits.consume('oidcToken', { ip }, now);
        const named = basicClientId(ctx.get('authorization') || undefined);
        if (named !== null) await deps.limits.assertAllowance('oidcToken', { client: named }, now);
      }
    } catch (error) {
      if (!(error instanceof AppError)) throw error;
      ctx.status = error.status;
      ctx.type = 'application/json; charset=utf-8';
      if (error.retryAfterSeconds !== undefined) ctx.set('Retry-After', String(error.retryAfterSeconds));
      ctx.body = JSON.stringify({ error: error.code, message: error.message });
      return;
    }
    await next();
    const client = ctx.oidc?.client;
    if (token && client !== undefined && ctx.status < 400) {
      // Counted, not refused: this answer is given; the client's next requests meet the budget.
      await deps.limits.consume('oidcToken', { client: client.clientId }, now).catch(() => undefined);
    }
  };
}
