/**
 * @module The session JWT (DESIGN §5): HS256, `sub` = user id, `sid` = session row id, `iat`,
 * `exp`. Only HS256 is accepted, so `alg: none` and key-confusion tokens are refused before any
 * claim is read. Time is passed in, never read from the system clock here.
 *
 * Signed and verified with fast-jwt rather than jose: jose computes HMAC through WebCrypto,
 * which Node runs on the libuv thread pool — every session check would wait for a pool thread,
 * behind password hashes under load. fast-jwt uses node:crypto's synchronous HMAC (a few
 * microseconds), so a session check needs no thread-pool round trip (docs/performance.md).
 *
 * A session cookie is checked on every request of the application behind Gatehouse, so the codec
 * remembers the verdict on a bounded number of recent tokens: their claims, or that they were
 * refused. A verdict is a property of the token's bytes under our key, nothing more. Expiry is
 * still checked on every call against the injected clock, and the session row is still read every
 * time, so revocation stays immediate. (fast-jwt's own cache keys each entry by a SHA-256 of the
 * token, computed on every call; a Map keyed by the token itself costs a tenth of that, measured.)
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
/**
 * Three base64url segments, the first a JSON object (`{"` encodes as `eyJ`): anything else is
 * refused before the verifier, which builds an error with a stack trace for each bad token.
 */
const COMPACT_JWT = /^eyJ[A-Za-z0-9_-]*\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;
/** Verdicts remembered, oldest forgotten first; a few hundred bytes each. */
const REMEMBERED_VERDICTS = 2048;

/** What a token that verified says, kept as plain values (the Dates are made per call). */
interface Verdict {
  sub: string;
  sid: string;
  iat: number;
  exp: number;
}

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

  const verdictOf = (token: string): Verdict | null => {
    let payload: Record<string, unknown>;
    try {
      payload = verifier(token) as Record<string, unknown>;
    } catch {
      // Malformed, forged, tampered or using another algorithm: one answer outside.
      return null;
    }
    const { sub, sid, iat, exp } = payload;
    if (typeof sub !== 'string' || typeof sid !== 'string' || typeof iat !== 'number' || typeof exp !== 'number') return null;
    return { sub, sid, iat, exp };
  };
  // A refusal is remembered like an acceptance: a bad cookie sent again costs a lookup too.
  const verdicts = new Map<string, Verdict | null>();
  const rememberedVerdictOf = (token: string): Verdict | null => {
    const known = verdicts.get(token);
    if (known !== undefined) return known;
    const verdict = verdictOf(token);
    if (verdicts.size >= REMEMBERED_VERDICTS) {
      const oldest = verdicts.keys().next();
      if (oldest.done !== true) verdicts.delete(oldest.value);
    }
    verdicts.set(token, verdict);
    return verdict;
  };

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
      if (token.length > MAX_TOKEN_LENGTH || !COMPACT_JWT.test(token)) return null;
      const verdict = rememberedVerdictOf(token);
      if (verdict === null || verdict.exp * 1000 <= now.getTime()) return null;
      return { userId: verdict.sub, sessionId: verdict.sid, issuedAt: new Date(verdict.iat * 1000), expiresAt: new Date(verdict.exp * 1000) };
    },
  };
}
