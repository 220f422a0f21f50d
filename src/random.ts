/** @module Cryptographically secure randomness, injectable so tests can pin a value. */
import { webcrypto } from 'node:crypto';

export interface RandomReader {
  read(bytes: Uint8Array): void;
}

export const secureRandom: RandomReader = {
  read(bytes) {
    webcrypto.getRandomValues(bytes);
  },
};

export function randomBytes(random: RandomReader, length: number): Uint8Array {
  const bytes = new Uint8Array(length);
  random.read(bytes);
  return bytes;
}

/** `length` random bytes, base64url-encoded without padding (RFC 4648 §5). */
export function randomBase64url(random: RandomReader, length: number): string {
  return Buffer.from(randomBytes(random, length)).toString('base64url');
}
