/**
 * @module What the OpenID Connect provider keeps: the engine's records (record store), the
 * registered clients (client store) and the signing keys (key store). Implemented in
 * db/oidc-record-store.ts, db/oidc-client-store.ts and db/oidc-key-store.ts.
 */

/** One record of the engine (oidc-provider's adapter models), as the adapter hands it over. */
export interface OidcRecord {
  model: string;
  /** The SHA-256 (hex) of the record's id: the id itself is a code, a token or a cookie's value. */
  idHash: string;
  /** The engine's payload, sealed with the envelope and bound to model and id hash. */
  sealedPayload: string;
  grantId: string | null;
  /** SHA-256 of the device flow's user code. */
  userCodeHash: string | null;
  /** SHA-256 of the record's uid (sessions and interactions are found by it). */
  uidHash: string | null;
  accountId: string | null;
  clientId: string | null;
  expiresAt: Date | null;
  /** A grant's scopes as ` openid organizations ` (spaces around each), so a scope's grants are found by LIKE; null for other models. */
  scope: string | null;
}

export interface StoredOidcRecord {
  idHash: string;
  sealedPayload: string;
  consumedAt: Date | null;
}

/** A grant an account gave a client, as the account's "Apps with access" lists it. */
export interface OidcGrantRow {
  grantId: string;
  clientId: string;
  sealedPayload: string;
  model: string;
  idHash: string;
  expiresAt: Date | null;
}

/**
 * What the account flows do to the apps a person signed in to through Gatehouse: a disabled,
 * reset or deleted account keeps no grant, code or token that works (in the flow's transaction).
 */
export interface AppAccessStore {
  /** Queues a back-channel logout to each app that has one, then revokes; returns how many of the engine's records went. */
  revokeAccount(accountId: string, now: Date): Promise<number>;
  /** The person's sessions ended (logout, revocation, password change): each app with a back-channel logout URI is told. */
  notifyLogout(accountId: string, now: Date): Promise<void>;
  /** Revokes the account's grants that give `scope` (and every token under them); returns how many grants. */
  revokeGrantsWithScope(accountId: string, scope: string): Promise<number>;
}

/** A back-channel logout the worker owes a client. */
export interface ClaimedLogoutNotice {
  id: string;
  clientId: string;
  accountId: string;
  /** Attempts made before this one. */
  attempts: number;
}

export interface LogoutNoticeStore {
  /** Up to `limit` due notices, each held for `leaseMs` by this worker (another finds it taken). */
  claimDueNotices(now: Date, limit: number, leaseMs: number): Promise<ClaimedLogoutNotice[]>;
  recordNoticeAttempt(id: string, outcome: { status: 'pending' | 'delivered' | 'failed'; nextAttemptAt: Date; error: string | null }): Promise<void>;
  /** Deletes delivered and failed notices created before `before`; returns how many. */
  sweepNotices(before: Date): Promise<number>;
}

export interface OidcRecordStore {
  upsertRecord(record: OidcRecord): Promise<void>;
  /** Null when there is none or it expired as of `now`. */
  findRecord(model: string, idHash: string, now: Date): Promise<StoredOidcRecord | null>;
  findRecordByUid(model: string, uidHash: string, now: Date): Promise<StoredOidcRecord | null>;
  findRecordByUserCode(model: string, userCodeHash: string, now: Date): Promise<StoredOidcRecord | null>;
  /** Marks its first use; false when it was used already (or is gone). */
  consumeRecord(model: string, idHash: string, now: Date): Promise<boolean>;
  destroyRecord(model: string, idHash: string): Promise<void>;
  /** Every record of the grant, whatever its model: the grant itself, its codes and tokens. */
  revokeGrant(grantId: string): Promise<number>;
  /** The live grants of an account, oldest first. */
  listGrantsOfAccount(accountId: string, now: Date): Promise<OidcGrantRow[]>;
  /** Expired records, in batches; returns how many. */
  sweepExpiredRecords(now: Date): Promise<number>;
}

/** The grant types a client may be given, as the token endpoint names them (device_code in short). */
export const GRANT_NAMES = ['authorization_code', 'refresh_token', 'client_credentials', 'device_code'] as const;
export type GrantName = (typeof GRANT_NAMES)[number];

export const ID_TOKEN_ALGS = ['ES256', 'RS256'] as const;
export type IdTokenAlg = (typeof ID_TOKEN_ALGS)[number];

/** A registered client, as operators see it (never its secret). */
export interface OidcClient {
  clientId: string;
  name: string;
  /** A public client (an SPA, a mobile or desktop app) has no secret. */
  public: boolean;
  /** Skips the consent page: an app of the team itself. */
  firstParty: boolean;
  redirectUris: string[];
  postLogoutRedirectUris: string[];
  grantTypes: GrantName[];
  /** The scopes it may ask for beyond `openid`. */
  scopes: string[];
  backchannelLogoutUri: string | null;
  idTokenSignedResponseAlg: IdTokenAlg;
  createdAt: Date;
  updatedAt: Date;
}

/** What an operator may change after registration. */
export type OidcClientChanges = Partial<
  Pick<
    OidcClient,
    'name' | 'firstParty' | 'redirectUris' | 'postLogoutRedirectUris' | 'grantTypes' | 'scopes' | 'backchannelLogoutUri' | 'idTokenSignedResponseAlg'
  >
>;

export interface OidcClientStore {
  /** `secretHash`: SHA-256 of a confidential client's secret; null for a public client. */
  createClient(client: OidcClient, secretHash: string | null): Promise<void>;
  listClients(): Promise<OidcClient[]>;
  findClient(clientId: string): Promise<{ client: OidcClient; secretHash: string | null } | null>;
  updateClient(clientId: string, changes: OidcClientChanges, now: Date): Promise<OidcClient | null>;
  /** Its grants and tokens go with it. False when there was none. */
  deleteClient(clientId: string): Promise<boolean>;
  /** False when there is no such confidential client. */
  replaceSecret(clientId: string, secretHash: string, now: Date): Promise<boolean>;
  countClients(): Promise<number>;
}

/** A signing key as stored: the private part sealed. */
export interface OidcSigningKey {
  kid: string;
  alg: 'ES256' | 'RS256';
  publicJwk: string;
  privateJwkSealed: string;
  createdAt: Date;
  /** Published from `createdAt`; signs from here. */
  signsFrom: Date;
  retiredAt: Date | null;
}

export interface OidcKeyStore {
  /** Every key, retired ones included, newest first. */
  listKeys(): Promise<OidcSigningKey[]>;
  insertKeys(keys: readonly OidcSigningKey[]): Promise<void>;
  /** False when there is no such key or it was already retired. */
  retireKey(kid: string, now: Date): Promise<boolean>;
}
