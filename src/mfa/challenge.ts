/**
 * @module The second-factor challenge: what a browser carries between the first factor (the
 * right password, or a provider sign-in) and the code. A signed HttpOnly cookie, alive 5
 * minutes, holding the user id, how the first factor was proven, where to land after, and a
 * random id. It is never a session: it opens nothing but `POST /api/auth/2fa/verify`, and the
 * id is recorded as spent on the one success (a wrong code does not spend it).
 *
 *   `v1.<base64url JSON>.<HMAC-SHA-256>` under a key derived from JWT_SECRET by HKDF with its own label.
 */
import type { Context } from 'hono';
import { getCookie } from 'hono/cookie';
import { deriveKey, MAX_SIGNED_RECORD_LENGTH, readSignedRecord, signRecord } from '../crypto/mac.js';
import { addAnswerCookie, clearAnswerCookie } from '../http/answer.js';
import type { AppEnv } from '../http/env.js';
import { randomBase64url, type RandomReader } from '../random.js';

export const CHALLENGE_LIFETIME_MS = 5 * 60 * 1000;

export interface Challenge {
  /** Random; recorded as spent when the challenge succeeds. */
  id: string;
  userId: string;
  /** How the first factor was proven: `password`, `github`, … */
  firstMethods: readonly string[];
  /** Where a provider sign-in would have landed; null for a password login (the page decides). */
  returnTo: string | null;
  expiresAt: Date;
}

export function createChallengeKey(jwtSecret: string): Uint8Array {
  return deriveKey(jwtSecret, 'gatehouse mfa challenge v1');
}

export function issueChallenge(
  key: Uint8Array,
  random: RandomReader,
  input: { userId: string; firstMethods: readonly string[]; returnTo: string | null; now: Date },
): { challenge: Challenge; value: string } {
  const challenge: Challenge = {
    id: randomBase64url(random, 16),
    userId: input.userId,
    firstMethods: input.firstMethods,
    returnTo: input.returnTo,
    expiresAt: new Date(input.now.getTime() + CHALLENGE_LIFETIME_MS),
  };
  const sign = (returnTo: string | null) =>
    signRecord(key, { i: challenge.id, u: challenge.userId, m: challenge.firstMethods, r: returnTo, e: challenge.expiresAt.getTime() });
  const value = sign(challenge.returnTo);
  if (value.length <= MAX_SIGNED_RECORD_LENGTH) return { challenge, value };
  // A return_to of many multi-byte characters would make a cookie no browser keeps: the sign-in
  // finishes on the default page rather than never.
  return { challenge: { ...challenge, returnTo: null }, value: sign(null) };
}

/** The challenge in `value` when its signature holds and it has not expired; null otherwise. */
export function readChallenge(key: Uint8Array, value: string | undefined, now: Date): Challenge | null {
  const record = readSignedRecord(key, value, now);
  if (record === null) return null;
  // Signed under this key (derived from JWT_SECRET), so written by issueChallenge: its fields are as written.
  const { i, u, m, r, e } = record as { i: string; u: string; m: string[]; r: string | null; e: number };
  return { id: i, userId: u, firstMethods: m, returnTo: r, expiresAt: new Date(e) };
}

export interface ChallengeCookieSettings {
  /** `__Host-gatehouse_mfa` with an https BASE_URL, else `gatehouse_mfa`. */
  name: string;
  secure: boolean;
}

export function challengeCookieSettings(httpsBaseUrl: boolean): ChallengeCookieSettings {
  return { name: httpsBaseUrl ? '__Host-gatehouse_mfa' : 'gatehouse_mfa', secure: httpsBaseUrl };
}

export function setChallengeCookie(c: Context<AppEnv>, settings: ChallengeCookieSettings, value: string, now: Date): void {
  addAnswerCookie(c, settings.name, value, {
    httpOnly: true,
    secure: settings.secure,
    // Lax: a provider's redirect back is a top-level navigation, which must carry it to /login.
    sameSite: 'Lax',
    path: '/',
    maxAge: CHALLENGE_LIFETIME_MS / 1000,
    expires: new Date(now.getTime() + CHALLENGE_LIFETIME_MS),
  });
}

export function readChallengeCookie(c: Context<AppEnv>, settings: ChallengeCookieSettings): string | undefined {
  return getCookie(c, settings.name);
}

export function clearChallengeCookie(c: Context<AppEnv>, settings: ChallengeCookieSettings): void {
  clearAnswerCookie(c, settings.name, { path: '/', secure: settings.secure, httpOnly: true, sameSite: 'Lax' });
}
