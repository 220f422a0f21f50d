/**
 * @module Device tokens, the value of the device cookie (OWASP "Slow Down Online Guessing Attacks
 * with Device Cookies", https://owasp.org/www-community/Slow_Down_Online_Guessing_Attacks_with_Device_Cookies).
 * After a successful login the browser gets `v1.<email>.<nonce>.<mac>`: the email (base64url), a
 * random nonce and an HMAC-SHA-256 over both. A browser that presents a valid token for the email
 * it logs in with is a device that has logged in before: an email lock caused by guesses from
 * elsewhere does not stop it, and its own failures are counted and locked by its nonce alone.
 * The token proves only "this browser once knew the password"; it never signs anyone in.
 */
import { hkdfSync } from 'node:crypto';
import { hasValidSignature, signPayload } from '../crypto/mac.js';
import { randomBase64url, type RandomReader } from '../random.js';

export interface DeviceToken {
  email: string;
  /** Identifies this browser's own failure count and lock. */
  nonce: string;
}

const VERSION = 'v1';
const NONCE_BYTES = 16;

/**
 * The MAC key, derived from JWT_SECRET with HKDF (RFC 5869) under its own label, so that a
 * device token can never be mistaken for, or help forge, anything else signed with that secret.
 */
export function createDeviceTokenKey(jwtSecret: string): Uint8Array {
  return new Uint8Array(hkdfSync('sha256', jwtSecret, '', 'gatehouse device cookie v1', 32));
}

export function issueDeviceToken(key: Uint8Array, email: string, random: RandomReader): string {
  const payload = `${VERSION}.${Buffer.from(email, 'utf8').toString('base64url')}.${randomBase64url(random, NONCE_BYTES)}`;
  return `${payload}.${signPayload(key, payload)}`;
}

/** The token's email and nonce when its MAC verifies; null for anything else. */
export function readDeviceToken(key: Uint8Array, value: string): DeviceToken | null {
  const parts = value.split('.');
  if (parts.length !== 4 || parts[0] !== VERSION) return null;
  const [, encodedEmail, nonce, presentedMac] = parts as [string, string, string, string];
  if (!hasValidSignature(key, `${VERSION}.${encodedEmail}.${nonce}`, presentedMac)) return null;
  if (!/^[A-Za-z0-9_-]{22}$/.test(nonce)) return null;
  return { email: Buffer.from(encodedEmail, 'base64url').toString('utf8'), nonce };
}
