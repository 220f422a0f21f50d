/**
 * isUsablePublicKey (src/passkeys/public-key.ts) on COSE keys built from real node:crypto keys:
 * every kind a passkey may hold is accepted, and keys no verification could use are refused.
 */
import { generateKeyPairSync } from 'node:crypto';
import { describe, expect, test } from 'vitest';
import { isUsablePublicKey } from '../src/passkeys/public-key.js';

const bytes = (base64url: string | undefined): Uint8Array => new Uint8Array(Buffer.from(base64url ?? '', 'base64url'));

function ec2(namedCurve: 'P-256' | 'P-384' | 'P-521', crv: number): Map<number, unknown> {
  const jwk = generateKeyPairSync('ec', { namedCurve }).publicKey.export({ format: 'jwk' });
  return new Map<number, unknown>([
    [1, 2],
    [3, -7],
    [-1, crv],
    [-2, bytes(jwk.x)],
    [-3, bytes(jwk.y)],
  ]);
}

function ed25519(): Map<number, unknown> {
  const jwk = generateKeyPairSync('ed25519').publicKey.export({ format: 'jwk' });
  return new Map<number, unknown>([
    [1, 1],
    [3, -8],
    [-1, 6],
    [-2, bytes(jwk.x)],
  ]);
}

function rsa(): Map<number, unknown> {
  const jwk = generateKeyPairSync('rsa', { modulusLength: 2048 }).publicKey.export({ format: 'jwk' });
  return new Map<number, unknown>([
    [1, 3],
    [3, -257],
    [-1, bytes(jwk.n)],
    [-2, bytes(jwk.e)],
  ]);
}

const changed = (key: Map<number, unknown>, label: number, value: unknown): Map<number, unknown> => new Map(key).set(label, value);
const without = (key: Map<number, unknown>, label: number): Map<number, unknown> => {
  const copy = new Map(key);
  copy.delete(label);
  return copy;
};

describe('a passkey public key that a sign-in could verify against', () => {
  test('EC2 on P-256, P-384 and P-521, Ed25519 and RSA keys are usable', () => {
    for (const key of [ec2('P-256', 1), ec2('P-384', 2), ec2('P-521', 3), ed25519(), rsa()]) expect(isUsablePublicKey(key)).toBe(true);
  });

  test('malformed or impossible keys are not', () => {
    const p256 = ec2('P-256', 1);
    const x = p256.get(-2) as Uint8Array;
    const refused: [string, Map<number, unknown>][] = [
      ['a point of zeros, off the curve', changed(changed(p256, -2, new Uint8Array(32)), -3, new Uint8Array(32))],
      ['another y for the same x', changed(p256, -3, x)],
      ['a truncated x', changed(p256, -2, x.subarray(0, 20))],
      ['no y', without(p256, -3)],
      ['x as a number', changed(p256, -2, 5)],
      ['an empty x', changed(p256, -2, new Uint8Array(0))],
      ['an unknown curve', changed(p256, -1, 99)],
      ['a P-256 point named P-384', changed(p256, -1, 2)],
      ['an unknown key type', changed(p256, 1, 4)],
      ['no key type', without(p256, 1)],
      ['an Ed25519 key of 31 bytes', changed(ed25519(), -2, new Uint8Array(31))],
      ['an X25519 curve (not a signing key)', changed(ed25519(), -1, 4)],
      ['an RSA key without its exponent', without(rsa(), -2)],
      ['nothing at all', new Map()],
    ];
    for (const [what, key] of refused) expect([what, isUsablePublicKey(key)]).toEqual([what, false]);
  });
});
