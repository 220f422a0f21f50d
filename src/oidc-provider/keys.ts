/**
 * @module The provider's signing keys: one EC P-256 (ES256, the default) and one RSA (RS256) key,
 * made with jose, kept in the database with the private JWK sealed by the envelope (bound to its
 * key id), so every instance signs with the same keys. A rotation publishes new keys at once and
 * signs with them after a delay, so every verifier has fetched them before a token needs them;
 * old keys stay published until an operator retires them.
 */
import { calculateJwkThumbprint, exportJWK, generateKeyPair, type JWK } from 'jose';
import type { Envelope } from '../crypto/envelope.js';
import type { OidcKeyStore, OidcSigningKey } from './store.js';

export const SIGNING_ALGS = ['ES256', 'RS256'] as const;

/** What the sealed private JWK is bound to. */
function sealBinding(kid: string): string {
  return `oidc-signing-key.${kid}`;
}

async function makeKey(alg: OidcSigningKey['alg'], envelope: Envelope, createdAt: Date, signsFrom: Date): Promise<OidcSigningKey> {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
  const publicJwk = await exportJWK(publicKey);
  // The thumbprint names the key; the algorithm first, so a kid never begins with '-' (an option on the command line).
  const kid = `${alg.toLowerCase()}-${await calculateJwkThumbprint(publicJwk)}`;
  const privateJwk = { ...(await exportJWK(privateKey)), kid, alg, use: 'sig' };
  return {
    kid,
    alg,
    publicJwk: JSON.stringify({ ...publicJwk, kid, alg, use: 'sig' }),
    privateJwkSealed: envelope.seal(JSON.stringify(privateJwk), sealBinding(kid)),
    createdAt,
    signsFrom,
    retiredAt: null,
  };
}

/** New keys of both algorithms, signing from `signsFrom`. */
export async function makeKeyPairSet(envelope: Envelope, now: Date, signsFrom: Date): Promise<OidcSigningKey[]> {
  return Promise.all(SIGNING_ALGS.map((alg) => makeKey(alg, envelope, now, signsFrom)));
}

/** The first start: keys of both algorithms when there are none that are not retired. */
export async function ensureSigningKeys(store: OidcKeyStore, envelope: Envelope, now: Date): Promise<void> {
  const keys = await store.listKeys();
  const missing = SIGNING_ALGS.filter((alg) => !keys.some((key) => key.alg === alg && key.retiredAt === null));
  if (missing.length === 0) return;
  await store.insertKeys(await Promise.all(missing.map((alg) => makeKey(alg, envelope, now, now))));
}

/**
 * The private JWKs the engine signs with and publishes, in the order it picks them: for each
 * algorithm the engine signs with the first key of it, so keys that sign now come first (the
 * newest first), then the keys published ahead of their time. Retired keys are left out.
 */
export function activeJwks(keys: readonly OidcSigningKey[], envelope: Envelope, now: Date): JWK[] {
  const live = keys.filter((key) => key.retiredAt === null);
  const signing = live.filter((key) => key.signsFrom.getTime() <= now.getTime()).sort((a, b) => b.signsFrom.getTime() - a.signsFrom.getTime());
  const pending = live.filter((key) => key.signsFrom.getTime() > now.getTime());
  return [...signing, ...pending].flatMap((key) => {
    const opened = envelope.open(key.privateJwkSealed, sealBinding(key.kid));
    // A key sealed under a key no longer configured cannot sign; the others still can.
    return opened === null ? [] : [JSON.parse(opened) as JWK];
  });
}

/** A summary that changes whenever the engine must be rebuilt with other keys. */
export function keySetFingerprint(keys: readonly OidcSigningKey[], now: Date): string {
  return keys
    .filter((key) => key.retiredAt === null)
    .map((key) => `${key.kid}:${key.signsFrom.getTime() <= now.getTime() ? 'signing' : 'pending'}`)
    .sort()
    .join(',');
}

/**
 * Retires `kid` unless that would leave its algorithm without another key that signs now (a key
 * still waiting for its rotation delay does not count: it would sign before verifiers fetched it):
 * 'last_key' then, 'not_found' when there is no such key that is not retired.
 */
export async function retireSigningKey(store: OidcKeyStore, kid: string, now: Date): Promise<'retired' | 'last_key' | 'not_found'> {
  const keys = await store.listKeys();
  const key = keys.find((each) => each.kid === kid && each.retiredAt === null);
  if (key === undefined) return 'not_found';
  const others = keys.filter((each) => each.alg === key.alg && each.retiredAt === null && each.kid !== kid && each.signsFrom.getTime() <= now.getTime());
  if (others.length === 0) return 'last_key';
  return (await store.retireKey(kid, now)) ? 'retired' : 'not_found';
}
