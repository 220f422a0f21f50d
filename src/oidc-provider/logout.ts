/**
 * @module RP-initiated logout ends the Gatehouse session too. An app sends the person to
 * /oauth2/end-session; the engine asks them to confirm and ends its own session; this middleware,
 * around the engine's confirmation step, then ends the Gatehouse session of the same browser
 * (deleted, `logout` audit row, the cookie cleared), as signing out on Gatehouse's own pages does.
 * Without it the person would still be signed in to Gatehouse and every other app.
 */
import { parse as parseCookies, serialize } from 'hono/utils/cookie';
import type { KoaContextWithOIDC } from 'oidc-provider';
import type { Clock } from '../clock.js';
import type { SessionCookieSettings } from '../session/cookie.js';
import { revokeSession, validateSessionToken, type SessionDeps } from '../session/flow.js';
import type { Stores } from '../stores.js';

export interface LogoutDeps {
  session: SessionDeps;
  cookie: SessionCookieSettings;
  stores: Pick<Stores, 'audit'>;
  clock: Clock;
}

const CONFIRM_PATH = '/oauth2/end-session/confirm';

export function endGatehouseSessionOnLogout(deps: LogoutDeps) {
  return async (ctx: KoaContextWithOIDC, next: () => Promise<void>): Promise<void> => {
    await next();
    if (ctx.path !== CONFIRM_PATH || ctx.method !== 'POST' || ctx.status < 300 || ctx.status >= 400) return;
    // The confirmation form's "yes"; without it the engine kept its session, and so do we.
    if (!ctx.oidc?.params?.logout) return;
    const header = ctx.get('cookie');
    const token = header === '' ? undefined : parseCookies(header, deps.cookie.name)[deps.cookie.name];
    if (token === undefined) return;
    const now = deps.clock.now();
    const valid = await validateSessionToken(deps.session, token, now);
    if (valid !== null) {
      await revokeSession(deps.session, valid.user, valid.session.id, now);
      await deps.stores.audit.recordEvent({
        type: 'logout',
        userId: valid.user.id,
        ip: ctx.ip,
        userAgent: ctx.get('user-agent') || null,
        metadata: { sessionId: valid.session.id, via: 'oidc_end_session', clientId: ctx.oidc.client?.clientId ?? null },
        at: now,
      });
    }
    ctx.append('Set-Cookie', serialize(deps.cookie.name, '', { path: '/', maxAge: 0, secure: deps.cookie.secure, httpOnly: true, sameSite: 'Lax' }));
  };
}
