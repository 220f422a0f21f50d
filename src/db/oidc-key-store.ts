/** @module OidcKeyStore over Kysely: the provider's signing keys (018-oidc-provider.ts). */
import type { Kysely, Selectable } from 'kysely';
import type { OidcKeyStore, OidcSigningKey } from '../oidc-provider/store.js';
import type { Database, OidcSigningKeysTable } from './schema.js';

function toKey(row: Selectable<OidcSigningKeysTable>): OidcSigningKey {
  return {
    kid: row.kid,
    alg: row.alg === 'RS256' ? 'RS256' : 'ES256',
    publicJwk: row.public_jwk,
    privateJwkSealed: row.private_jwk_sealed,
    createdAt: new Date(Number(row.created_at)),
    signsFrom: new Date(Number(row.signs_from)),
    retiredAt: row.retired_at === null ? null : new Date(Number(row.retired_at)),
  };
}

export function createOidcKeyStore(db: Kysely<Database>): OidcKeyStore {
  return {
    async listKeys() {
      const rows = await db.selectFrom('oidc_signing_keys').selectAll().orderBy('created_at', 'desc').orderBy('kid').execute();
      return rows.map(toKey);
    },

    async insertKeys(keys) {
      if (keys.length === 0) return;
      await db
        .insertInto('oidc_signing_keys')
        .values(
          keys.map((key) => ({
            kid: key.kid,
            alg: key.alg,
            public_jwk: key.publicJwk,
            private_jwk_sealed: key.privateJwkSealed,
            created_at: key.createdAt.getTime(),
            signs_from: key.signsFrom.getTime(),
            retired_at: key.retiredAt?.getTime() ?? null,
          })),
        )
        .execute();
    },

    async retireKey(kid, now) {
      const result = await db
        .updateTable('oidc_signing_keys')
        .set({ retired_at: now.getTime() })
        .where('kid', '=', kid)
        .where('retired_at', 'is', null)
        .executeTakeFirst();
      return Number(result.numUpdatedRows) > 0;
    },
  };
}
