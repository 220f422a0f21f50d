/**
 * @module Whether a new passkey's public key is one a sign-in could ever verify against.
 * `@simplewebauthn/server` checks a registration's signature chain, challenge, origin and algorithm,
 * but with attestation "none" it stores whatever COSE key the authenticator data holds: a point off
 * its curve, an unknown curve, a truncated coordinate. Such a passkey never signs in, yet it would
 * count as a way into the account (the last way in may not be removed), so it is refused when added.
 */
import { createPublicKey, type JsonWebKey } from 'node:crypto';

/** COSE_Key labels (RFC 9052 §7, RFC 9053 §7): the same negative labels mean other things per key type. */
const KTY = 1;
const OKP = 1;
const EC2 = 2;
const RSA = 3;
const CRV = -1;
const X = -2;
const Y = -3;
const RSA_N = -1;
const RSA_E = -2;

const EC2_CURVES = new Map<unknown, string>([
  [1, 'P-256'],
  [2, 'P-384'],
  [3, 'P-521'],
]);
const OKP_CURVES = new Map<unknown, string>([[6, 'Ed25519']]);

/** The credential's decoded COSE key as a JWK; null when a part is missing or of the wrong kind. */
function toJwk(cose: ReadonlyMap<number, unknown>): JsonWebKey | null {
  const part = (label: number): string | null => {
    const value = cose.get(label);
    return value instanceof Uint8Array && value.length > 0 ? Buffer.from(value).toString('base64url') : null;
  };
  switch (cose.get(KTY)) {
    case EC2: {
      const crv = EC2_CURVES.get(cose.get(CRV));
      const [x, y] = [part(X), part(Y)];
      return crv !== undefined && x !== null && y !== null ? { kty: 'EC', crv, x, y } : null;
    }
    case OKP: {
      const crv = OKP_CURVES.get(cose.get(CRV));
      const x = part(X);
      return crv !== undefined && x !== null ? { kty: 'OKP', crv, x } : null;
    }
    case RSA: {
      const [n, e] = [part(RSA_N), part(RSA_E)];
      return n !== null && e !== null ? { kty: 'RSA', n, e } : null;
    }
    default:
      return null;
  }
}

/**
 * True when node:crypto imports the key: it refuses coordinates of the wrong length, points that
 * are not on their curve and malformed RSA parameters, as a verification would later.
 */
export function isUsablePublicKey(cose: ReadonlyMap<number, unknown>): boolean {
  const jwk = toJwk(cose);
  if (jwk === null) return false;
  try {
    createPublicKey({ key: jwk, format: 'jwk' });
    return true;
  } catch {
    return false;
  }
}
