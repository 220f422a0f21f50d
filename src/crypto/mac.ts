/**
 * @module HMAC-SHA-256 over a short value the browser carries (the device cookie, the pending
 * provider sign-in), so it comes back unchanged or not at all.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

/** The MAC of `payload`, base64url. */
export function signPayload(key: string | Uint8Array, payload: string): string {
  return createHmac('sha256', key).update(payload, 'utf8').digest('base64url');
}

/** True when `signature` (base64url) is the MAC of `payload`; compared in constant time. */
export function hasValidSignature(key: string | Uint8Array, payload: string, signature: string): boolean {
  const expected = createHmac('sha256', key).update(payload, 'utf8').digest();
  const presented = Buffer.from(signature, 'base64url');
  return presented.length === expected.length && timingSafeEqual(presented, expected);
}
