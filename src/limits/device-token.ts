/**
 * @module Device tokens, the value of the device cookie (OWASP "Slow Down Online Guessing Attacks
 * with Device Cookies", https://owasp.org/www-community/Slow_Down_Online_Guessing_Attacks_with_Device_Cookies).
 * After a successful login the browser gets `v2.<email tag>.<nonce>.<mac>`: a keyed tag of the
 * email (HMAC-SHA-256, truncated), a random nonce and an HMAC-SHA-256 over both. The cookie never
 * carries the address itself: it is not readable from a stolen cookie jar or a proxy's log, and
 * the tag can only be checked against an email the login names. (`v1` tokens, which carried the
 * email in base64url, are ignored: such a browser is an ordinary one until its next login.) A browser that presents a valid token for the email
 * it logs in with is a device that has logged in before: an email lock caused by guesses from
 * elsewhere does not stop it, and its own failures are counted and locked by its nonce alone.
 * The token proves only "this browser once knew the password"; it never signs anyone in.
 */
import { deriveKey, hasValidSignature, signPayload } from '../crypto/mac.js';
import { randomBase64url, type RandomReader } from '../random.js';

export interface DeviceToken {
  /** Identifies this browser's own failure count and lock. */
  nonce: string;
}

const VERSION = 'v2';
/** Bytes of the email's tag: 128 bits, so no two addresses share one in practice. */
const EMAIL_TAG_BYTES = 16;
const NONCE_BYTES = 16;

/**
 * The MAC key, derived from JWT_SECRET with HKDF (RFC 5869) under its own label, so that a
 * device token can never be mistaken for, or help forge, anything else signed with that secret.
 */
export function createDeviceTokenKey(jwtSecret: string): Uint8Array {
  return deriveKey(jwtSecret, 'gatehouse device cookie v1');
}

/** The email's keyed tag: the same email always gives the same tag, and nothing else reveals it. */
function emailTag(key: Uint8Array, email: string): string {
  return Buffer.from(signPayload(key, `email:${email}`), 'base64url')
    .subarray(0, EMAIL_TAG_BYTES)
    .toString('base64url');
}

export function issueDeviceToken(key: Uint8Array, email: string, random: RandomReader): string {
  const payload = `${VERSION}.${emailTag(key, email)}.${randomBase64url(random, NONCE_BYTES)}`;
  return `${payload}.${signPayload(key, payload)}`;
}

/** The token's nonce when its MAC verifies and it was issued for `email`; null for anything else. */
export function readDeviceToken(key: Uint8Array, value: string, email: string): DeviceToken | null {
  const parts = value.split('.');
  if (parts.length !== 4 || parts[0] !== VERSION) return null;
  const [, tag, nonce, presentedMac] = parts as [string, string, string, string];
  if (!hasValidSignature(key, `${VERSION}.${tag}.${nonce}`, presentedMac)) return null;
  if (!/^[A-Za-z0-9_-]{22}$/.test(nonce)) return null;
  // Both tags come from the same HMAC, so comparing them leaks nothing worth a constant-time compare.
  return tag === emailTag(key, email) ? { nonce } : null;
}
