/**
 * @module AES-256-GCM envelope for secrets kept at rest (provider tokens). Each sealed value is
 * self-describing: `v1.<keyId>.<iv>.<ciphertext>.<tag>`, base64url parts, so keys can rotate —
 * the first key seals, every listed key opens — and a value names the key it needs.
 *
 * - IV: a fresh random 96-bit nonce per seal, the size NIST SP 800-38D §8.2 recommends for GCM
 *   (https://doi.org/10.6028/NIST.SP.800-38D); with random IVs a key is good for far more
 *   seals than one deployment performs (the 2^32 bound of §8.3).
 * - Tag: the full 128 bits.
 * - Associated data: what the value belongs to (e.g. an account id and field), so a ciphertext
 *   copied to another row or column does not open there.
 */
import { createCipheriv, createDecipheriv, createHash } from 'node:crypto';
import { randomBytes, secureRandom, type RandomReader } from '../random.js';

const VERSION = 'v1';
const IV_BYTES = 12;
const TAG_BYTES = 16;
const KEY_BYTES = 32;

export interface Envelope {
  /** Encrypts `plaintext` under the current key, bound to `associatedData`. */
  seal(plaintext: string, associatedData: string): string;
  /** The plaintext, or null when the value is malformed, tampered, bound to other data or sealed under an unknown key. */
  open(sealed: string, associatedData: string): string | null;
}

/** A short, non-secret name for a key: the first 8 bytes of its SHA-256, base64url. */
export function keyIdOf(key: Buffer): string {
  return createHash('sha256').update(key).digest().subarray(0, 8).toString('base64url');
}

/**
 * @example
 * const envelope = createEnvelope(config.encryptionKeys); // [current, ...older]
 * const sealed = envelope.seal(accessToken, `${accountId}.access_token`);
 * envelope.open(sealed, `${accountId}.access_token`); // accessToken
 */
export function createEnvelope(keys: readonly Buffer[], options: { random?: RandomReader } = {}): Envelope {
  const random = options.random ?? secureRandom;
  for (const key of keys) {
    if (key.length !== KEY_BYTES) throw new Error(`createEnvelope: every key must be ${KEY_BYTES} bytes`);
  }
  const byId = new Map(keys.map((key) => [keyIdOf(key), key] as const));
  const current = keys[0];
  if (current === undefined) throw new Error('createEnvelope needs at least one key');
  const currentId = keyIdOf(current);

  return {
    seal(plaintext, associatedData) {
      const iv = Buffer.from(randomBytes(random, IV_BYTES));
      const cipher = createCipheriv('aes-256-gcm', current, iv, { authTagLength: TAG_BYTES });
      cipher.setAAD(Buffer.from(associatedData, 'utf8'));
      const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
      const tag = cipher.getAuthTag();
      return [VERSION, currentId, iv.toString('base64url'), ciphertext.toString('base64url'), tag.toString('base64url')].join('.');
    },

    open(sealed, associatedData) {
      const parts = sealed.split('.');
      if (parts.length !== 5 || parts[0] !== VERSION) return null;
      const [, keyId, ivText, ciphertextText, tagText] = parts as [string, string, string, string, string];
      const key = byId.get(keyId);
      if (key === undefined) return null;
      const iv = Buffer.from(ivText, 'base64url');
      const tag = Buffer.from(tagText, 'base64url');
      // A short tag would weaken GCM's integrity check; only full-size parts are accepted.
      if (iv.length !== IV_BYTES || tag.length !== TAG_BYTES) return null;
      try {
        const decipher = createDecipheriv('aes-256-gcm', key, iv, { authTagLength: TAG_BYTES });
        decipher.setAAD(Buffer.from(associatedData, 'utf8'));
        decipher.setAuthTag(tag);
        return Buffer.concat([decipher.update(Buffer.from(ciphertextText, 'base64url')), decipher.final()]).toString('utf8');
      } catch {
        return null;
      }
    },
  };
}
