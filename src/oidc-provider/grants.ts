/**
 * @module "Apps with access": the apps a person let sign them in through Gatehouse, from the
 * engine's grants, and the withdrawal of one — every grant the person gave it, and with them every
 * code, access token and refresh token issued under them, at once (introspection answers
 * `active: false` on every instance from the next request; a JWT access token lives until its
 * short `exp`).
 */
import type { Envelope } from '../crypto/envelope.js';
import { notFound } from '../errors.js';
import type { RequestContext } from '../request-context.js';
import type { Stores } from '../stores.js';
import { recordBinding } from './adapter.js';
import type { OidcClientStore, OidcRecordStore } from './store.js';

export interface GrantDeps {
  records: OidcRecordStore;
  clients: OidcClientStore;
  envelope: Envelope;
  stores: Pick<Stores, 'audit'>;
}

export interface AppWithAccess {
  clientId: string;
  clientName: string;
  /** The scopes given, `openid` first. */
  scopes: string[];
  /** When the first of its grants was given (ISO 8601). */
  createdAt: string;
}

const SCOPE_ORDER = ['openid', 'email', 'organizations', 'offline_access'];

/** The scope and issue time a grant's sealed payload holds; null when it does not open. */
function grantContents(envelope: Envelope, row: { model: string; idHash: string; sealedPayload: string }): { scopes: string[]; iat: number } | null {
  const text = envelope.open(row.sealedPayload, recordBinding(row.model, row.idHash));
  if (text === null) return null;
  const payload = JSON.parse(text) as { iat?: number; openid?: { scope?: string } };
  return { scopes: (payload.openid?.scope ?? '').split(' ').filter((scope) => scope !== ''), iat: payload.iat ?? 0 };
}

/** One entry per app, its grants' scopes together, oldest first. */
export async function listAppsWithAccess(deps: GrantDeps, userId: string, now: Date): Promise<AppWithAccess[]> {
  const byClient = new Map<string, { scopes: Set<string>; iat: number }>();
  for (const row of await deps.records.listGrantsOfAccount(userId, now)) {
    const contents = grantContents(deps.envelope, row);
    if (contents === null) continue;
    const entry = byClient.get(row.clientId) ?? { scopes: new Set<string>(), iat: contents.iat };
    for (const scope of contents.scopes) entry.scopes.add(scope);
    entry.iat = Math.min(entry.iat, contents.iat);
    byClient.set(row.clientId, entry);
  }
  const apps: AppWithAccess[] = [];
  for (const [clientId, entry] of byClient) {
    const client = await deps.clients.findClient(clientId);
    // A deleted client's grants went with it; one deleted meanwhile is not listed.
    if (client === null) continue;
    const scopes = [...entry.scopes].sort((a, b) => SCOPE_ORDER.indexOf(a) - SCOPE_ORDER.indexOf(b));
    apps.push({ clientId, clientName: client.client.name, scopes, createdAt: new Date(entry.iat * 1000).toISOString() });
  }
  return apps.sort((a, b) => a.createdAt.localeCompare(b.createdAt));
}

/** Withdraws every grant the person gave the app; 404 when there is none. */
export async function revokeAppAccess(deps: GrantDeps, userId: string, clientId: string, ctx: RequestContext): Promise<void> {
  const grants = (await deps.records.listGrantsOfAccount(userId, ctx.now)).filter((grant) => grant.clientId === clientId);
  if (grants.length === 0) throw notFound('This app has no access to your account.');
  let records = 0;
  for (const grant of grants) records += await deps.records.revokeGrant(grant.grantId);
  await deps.stores.audit.recordEvent({
    type: 'oidc_grant_revoked',
    userId,
    ip: ctx.ip,
    userAgent: ctx.userAgent,
    metadata: { clientId, grants: grants.length, records },
    at: ctx.now,
  });
}
