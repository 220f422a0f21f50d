/**
 * @module The OpenID Connect engine's storage (oidc-provider's adapter interface) on our database,
 * so that every instance shares sessions, codes and tokens: a code issued by one redeems on
 * another, and one redeemed twice is refused there too.
 *
 * At rest nothing is usable: a record is keyed by the SHA-256 of its id (the id of a code, a token
 * or a session is its value), found by the SHA-256 of its uid or user code, and its payload is
 * sealed with the envelope bound to the model and id hash (a payload may carry a session's cookie
 * value or a device's user code). Clients are read from the clients table (the `Client` model).
 *
 * The refresh grace: a refresh token used again within `refreshGraceSeconds` of its first use is
 * found as unused, so two refreshes racing (two tabs, a retry after a lost answer) both succeed;
 * past the grace the engine sees it used and revokes its whole grant. The first use is recorded
 * once, so the grace cannot slide by using the token again within it.
 */
import type { Adapter, AdapterPayload } from 'oidc-provider';
import type { Clock } from '../clock.js';
import type { Envelope } from '../crypto/envelope.js';
import { sha256Hex } from '../crypto/digest.js';
import { clientMetadata } from './client-metadata.js';
import type { OidcClientStore, OidcRecordStore, StoredOidcRecord } from './store.js';

export interface AdapterDeps {
  records: OidcRecordStore;
  clients: OidcClientStore;
  envelope: Envelope;
  clock: Clock;
  refreshGraceSeconds: number;
}

/** The engine's own error for a code (or device code) redeemed by another request meanwhile. */
export type AlreadyUsed = (what: string) => Error;

/** What a record's sealed payload is bound to: its model and id hash (a payload moved to another row does not open). */
export function recordBinding(model: string, idHash: string): string {
  return `oidc.${model}.${idHash}`;
}

/** The OpenID scopes a grant gives, as ` openid organizations `: not a secret, and the revocation by scope reads it. */
function grantScope(payload: AdapterPayload): string | null {
  const scope = (payload as { openid?: { scope?: unknown } }).openid?.scope;
  return typeof scope === 'string' && scope !== '' ? ` ${scope} ` : null;
}

/** The adapter for one model (`Session`, `AccessToken`, `Client`, …), as the engine asks for it. */
export function createAdapter(deps: AdapterDeps, model: string, alreadyUsed: AlreadyUsed): Adapter {
  if (model === 'Client') return clientAdapter(deps.clients);
  const { records, envelope, clock } = deps;

  const open = (idHash: string, record: StoredOidcRecord | null): AdapterPayload | undefined => {
    if (record === null) return undefined;
    const text = envelope.open(record.sealedPayload, recordBinding(model, idHash));
    if (text === null) return undefined;
    const payload = JSON.parse(text) as AdapterPayload;
    if (record.consumedAt === null) return payload;
    const sinceUse = (clock.now().getTime() - record.consumedAt.getTime()) / 1000;
    if (model === 'RefreshToken' && sinceUse <= deps.refreshGraceSeconds) return payload;
    return { ...payload, consumed: Math.floor(record.consumedAt.getTime() / 1000) };
  };

  const openFound = (record: StoredOidcRecord | null): AdapterPayload | undefined => (record === null ? undefined : open(record.idHash, record));

  return {
    async upsert(id, payload, expiresIn) {
      const idHash = sha256Hex(id);
      const accountId = typeof payload.accountId === 'string' ? payload.accountId : null;
      const clientId = typeof payload.clientId === 'string' ? payload.clientId : null;
      const grantId = model === 'Grant' ? id : typeof payload.grantId === 'string' ? payload.grantId : null;
      await records.upsertRecord({
        model,
        idHash,
        sealedPayload: envelope.seal(JSON.stringify(payload), recordBinding(model, idHash)),
        grantId,
        userCodeHash: typeof payload.userCode === 'string' ? sha256Hex(payload.userCode) : null,
        uidHash: typeof payload.uid === 'string' ? sha256Hex(payload.uid) : null,
        accountId,
        clientId,
        expiresAt: expiresIn === undefined ? null : new Date(clock.now().getTime() + expiresIn * 1000),
        scope: model === 'Grant' ? grantScope(payload) : null,
      });
    },
    find: async (id) => {
      const idHash = sha256Hex(id);
      return open(idHash, await records.findRecord(model, idHash, clock.now()));
    },
    findByUid: async (uid) => openFound(await records.findRecordByUid(model, sha256Hex(uid), clock.now())),
    findByUserCode: async (userCode) => openFound(await records.findRecordByUserCode(model, sha256Hex(userCode), clock.now())),
    async consume(id) {
      const first = await records.consumeRecord(model, sha256Hex(id), clock.now());
      // Two redemptions of one code racing (on two instances, say) both found it unused: the one
      // that did not consume it is refused. A refresh token used again within its grace is the
      // grace's case, not a race.
      if (!first && model !== 'RefreshToken') throw alreadyUsed(model);
    },
    destroy: (id) => records.destroyRecord(model, sha256Hex(id)),
    revokeByGrantId: async (grantId) => {
      await records.revokeGrant(grantId);
    },
  };
}

/** Clients are registered by operators (clients.ts): the engine only reads them. */
function clientAdapter(clients: OidcClientStore): Adapter {
  const readOnly = (): Promise<void> => Promise.reject(new Error('clients are registered with `gatehouse clients` or the admin API'));
  return {
    async find(id) {
      const found = await clients.findClient(id);
      return found === null ? undefined : clientMetadata(found.client, found.secretHash);
    },
    upsert: readOnly,
    findByUid: async () => undefined,
    findByUserCode: async () => undefined,
    consume: readOnly,
    destroy: readOnly,
    revokeByGrantId: async () => undefined,
  };
}
