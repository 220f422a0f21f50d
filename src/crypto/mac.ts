/**
 * @module HMAC-SHA-256 over a short value the browser carries (the device cookie, the pending
 * provider sign-in, the two-factor and passkey challenges), so it comes back unchanged or not at
 * all; and the per-use keys those MACs are made with.
 */
import { createHmac, hkdfSync, timingSafeEqual } from 'node:crypto';

/**
 * A key of its own for one use of a secret: HKDF-SHA-256 (RFC 5869) under `label`, so that a MAC
 * made for one use can never be mistaken for, or help forge, any other use of that secret.
 */
export function deriveKey(secret: string | Uint8Array, label: string): Uint8Array {
  return new Uint8Array(hkdfSync('sha256', secret, '', label, 32));
}

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

const SIGNED_RECORD_VERSION = 'v1';
/**
 * Longer than any record we sign — a second-factor challenge carries a return_to of up to 2,048
 * characters, which base64url makes about 2,750 — and short enough for a browser to keep as a
 * cookie (4,096 bytes with its name and attributes). Anything longer is not read at all.
 */
export const MAX_SIGNED_RECORD_LENGTH = 3800;

/**
 * A small record with its expiry `e` (epoch ms) as `v1.<base64url JSON>.<MAC of "v1.<payload>">`,
 * for a cookie that any instance can check without storing anything.
 */
export function signRecord(key: Uint8Array, record: { e: number } & Record<string, unknown>): string {
  const payload = `${SIGNED_RECORD_VERSION}.${Buffer.from(JSON.stringify(record)).toString('base64url')}`;
  return `${payload}.${signPayload(key, payload)}`;
}

/**
 * The record in `value` when its MAC holds under `key` and its expiry is after `now`; null for
 * anything else (missing, too long, malformed, signed with another key, expired). Its fields are
 * the signer's; the caller still checks the ones it reads.
 */
export function readSignedRecord(key: Uint8Array, value: string | undefined, now: Date): Record<string, unknown> | null {
  if (value === undefined || value.length > MAX_SIGNED_RECORD_LENGTH) return null;
  const [version, payload, signature, ...rest] = value.split('.');
  if (version !== SIGNED_RECORD_VERSION || payload === undefined || signature === undefined || rest.length > 0) return null;
  if (!hasValidSignature(key, `${version}.${payload}`, signature)) return null;
  try {
    const record: unknown = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
    if (typeof record !== 'object' || record === null) return null;
    const { e } = record as { e?: unknown };
    return typeof e === 'number' && e > now.getTime() ? (record as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}
