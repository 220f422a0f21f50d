/** @module SHA-256 digests of secrets that are stored instead of the secrets, and their comparison. */
import { hash, timingSafeEqual } from 'node:crypto';

/** One-shot hash (no Hash object): it runs on every session check. */
export function sha256Hex(value: string): string {
  return hash('sha256', value, 'hex');
}

/** Constant-time comparison of two hex digests; false for different lengths or empty input. */
export function hexDigestsEqual(a: string, b: string): boolean {
  const left = Buffer.from(a, 'hex');
  const right = Buffer.from(b, 'hex');
  return left.length === right.length && left.length > 0 && timingSafeEqual(left, right);
}
