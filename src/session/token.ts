/**
 * @module The session JWT (DESIGN §5): HS256, `sub` = user id, `sid` = session row id, `iat`,
 * `exp`. Only HS256 is accepted, so `alg: none` and key-confusion tokens are refused before any
 * claim is read. Time is passed in, never read from the system clock here.
 *
 * Signed and verified with fast-jwt rather than jose: jose computes HMAC through WebCrypto,
 * which Node runs on the libuv thread pool — every session check would wait for a pool thread,
 * behind password hashes under load. fast-jwt uses node:crypto's synchronous HMAC (a few
 * microseconds), so a session check needs no thread-pool round trip (README, Performance).
 */
import { createSigner, createVerifier } from 'fast-jwt';

export interface SessionClaims {
  userId: string;
  sessionId: string;
  issuedAt: Date;
  expiresAt: Date;
}

export interface SessionTokenCodec {
  sign(claims: SessionClaims): string;
  /** The claims of a well-formed, correctly signed, unexpired token; null for anything else. */
  verify(token: string, now: Date): SessionClaims | null;
}

const MAX_TOKEN_LENGTH = 2048;

export function createSessionTokenCodec(secret: string): SessionTokenCodec {
  // iat and exp are given explicitly from the injected clock; fast-jwt keeps a provided iat.
  const signer = createSigner({ key: secret, algorithm: 'HS256' });
  // Expiry is checked below against the injected clock; fast-jwt would read Date.now().
  const verifier = createVerifier({
    key: secret,
    algorithms: ['HS256'],
    ignoreExpiration: true,
    ignoreNotBefore: true,
    requiredClaims: ['sub', 'sid', 'iat', 'exp'],
    cache: false,
  });

  return {
    sign(claims) {
      return signer({
        sid: claims.sessionId,
        sub: claims.userId,
        iat: Math.floor(claims.issuedAt.getTime() / 1000),
        exp: Math.floor(claims.expiresAt.getTime() / 1000),
      });
    },

    verify(token, now) {
      if (token.length > MAX_TOKEN_LENGTH) return null;
      let payload: Record<string, unknown>;
      try {
        payload = verifier(token) as Record<string, unknown>;
      } catch {
        // Malformed, forged, tampered or using another algorithm: one answer outside.
        return null;
      }
      const { sub, sid, iat, exp } = payload;
      if (typeof sub !== 'string' || typeof sid !== 'string' || typeof iat !== 'number' || typeof exp !== 'number') return null;
      if (exp * 1000 <= now.getTime()) return null;
      return { userId: sub, sessionId: sid, issuedAt: new Date(iat * 1000), expiresAt: new Date(exp * 1000) };
    },
  };
}
