/**
 * @module The session JWT (DESIGN §5): HS256, `sub` = user id, `sid` = session row id, `iat`,
 * `exp`. Only HS256 is accepted, so `alg: none` and key-confusion tokens are refused by jose
 * before any claim is read. Time is passed in, never read from the system clock here.
 */
import { SignJWT, jwtVerify } from 'jose';

export interface SessionClaims {
  userId: string;
  sessionId: string;
  issuedAt: Date;
  expiresAt: Date;
}

export function createSessionKey(secret: string): Uint8Array {
  return new TextEncoder().encode(secret);
}

export async function signSessionToken(key: Uint8Array, claims: SessionClaims): Promise<string> {
  return new SignJWT({ sid: claims.sessionId })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setSubject(claims.userId)
    .setIssuedAt(Math.floor(claims.issuedAt.getTime() / 1000))
    .setExpirationTime(Math.floor(claims.expiresAt.getTime() / 1000))
    .sign(key);
}

/** The claims of a well-formed, correctly signed, unexpired token; null for anything else. */
export async function verifySessionToken(key: Uint8Array, token: string, now: Date): Promise<SessionClaims | null> {
  try {
    const { payload } = await jwtVerify(token, key, {
      algorithms: ['HS256'],
      currentDate: now,
      requiredClaims: ['sub', 'sid', 'iat', 'exp'],
    });
    if (typeof payload.sid !== 'string' || typeof payload.sub !== 'string') return null;
    return {
      userId: payload.sub,
      sessionId: payload.sid,
      issuedAt: new Date((payload.iat ?? 0) * 1000),
      expiresAt: new Date((payload.exp ?? 0) * 1000),
    };
  } catch {
    // Malformed, forged, tampered or expired: one answer outside, whatever jose's reason.
    return null;
  }
}
