/**
 * @module The WebAuthn challenge between a ceremony's two requests (options, then verify), kept
 * in a signed HttpOnly cookie rather than in a table: any instance can check it, and nothing is
 * stored until it is spent. Alive 5 minutes; its challenge is recorded as spent (the consumed
 * sign-ins table, as the 2FA challenge) by the first verification that presents it, so a replay
 * is refused on every instance.
 *
 *   `v1.<base64url JSON>.<HMAC-SHA-256>` under a key derived from JWT_SECRET by HKDF with its own
 *   label. A sign-in's cookie and a registration's have their own names and kinds: one cannot
 *   stand for the other.
 */
import type { Context } from 'hono';
import { getCookie } from 'hono/cookie';
import { sha256Hex } from '../crypto/digest.js';
import { deriveKey, readSignedRecord, signRecord } from '../crypto/mac.js';
import { addAnswerCookie, clearAnswerCookie } from '../http/answer.js';
import type { AppEnv } from '../http/env.js';
import { randomBase64url, type RandomReader } from '../random.js';

export const PASSKEY_CHALLENGE_LIFETIME_MS = 5 * 60 * 1000;

export type CeremonyKind = 'login' | 'register';

export interface PasskeyChallenge {
  kind: CeremonyKind;
  /** The WebAuthn challenge, base64url of 32 random bytes: what the authenticator signs. */
  challenge: string;
  /** The registering user; null for a sign-in (the credential names its user). */
  userId: string | null;
  expiresAt: Date;
}

export function createPasskeyChallengeKey(jwtSecret: string): Uint8Array {
  return deriveKey(jwtSecret, 'gatehouse passkey challenge v1');
}

export function issuePasskeyChallenge(
  key: Uint8Array,
  random: RandomReader,
  input: { kind: CeremonyKind; userId: string | null; now: Date },
): { challenge: PasskeyChallenge; value: string } {
  const challenge: PasskeyChallenge = {
    kind: input.kind,
    challenge: randomBase64url(random, 32),
    userId: input.userId,
    expiresAt: new Date(input.now.getTime() + PASSKEY_CHALLENGE_LIFETIME_MS),
  };
  const value = signRecord(key, { k: challenge.kind, c: challenge.challenge, u: challenge.userId, e: challenge.expiresAt.getTime() });
  return { challenge, value };
}

/** The challenge in `value` when its signature holds, it is of `kind` and has not expired; null otherwise. */
export function readPasskeyChallenge(key: Uint8Array, value: string | undefined, kind: CeremonyKind, now: Date): PasskeyChallenge | null {
  const record = readSignedRecord(key, value, now);
  if (record === null) return null;
  const { k, c, u, e } = record;
  if (k !== kind || typeof c !== 'string' || typeof e !== 'number' || (u !== null && typeof u !== 'string')) return null;
  return { kind, challenge: c, userId: u, expiresAt: new Date(e) };
}

/** The key under which a spent challenge is recorded (the consumed sign-ins table keeps 64 characters). */
export function spentChallengeKey(challenge: PasskeyChallenge): string {
  return sha256Hex(`passkey-${challenge.kind}:${challenge.challenge}`);
}

export interface PasskeyCookieSettings {
  /** `__Host-gatehouse_passkey` (and `…_passkey_reg`) with an https BASE_URL, else without the prefix. */
  loginName: string;
  registerName: string;
  secure: boolean;
}

export function passkeyCookieSettings(httpsBaseUrl: boolean): PasskeyCookieSettings {
  const prefix = httpsBaseUrl ? '__Host-' : '';
  return { loginName: `${prefix}gatehouse_passkey`, registerName: `${prefix}gatehouse_passkey_reg`, secure: httpsBaseUrl };
}

const nameOf = (settings: PasskeyCookieSettings, kind: CeremonyKind): string => (kind === 'login' ? settings.loginName : settings.registerName);

export function setPasskeyChallengeCookie(c: Context<AppEnv>, settings: PasskeyCookieSettings, kind: CeremonyKind, value: string, now: Date): void {
  addAnswerCookie(c, nameOf(settings, kind), value, {
    httpOnly: true,
    secure: settings.secure,
    // Strict: both requests are the page's own fetch calls; no navigation ever needs to carry it.
    sameSite: 'Strict',
    path: '/',
    maxAge: PASSKEY_CHALLENGE_LIFETIME_MS / 1000,
    expires: new Date(now.getTime() + PASSKEY_CHALLENGE_LIFETIME_MS),
  });
}

export function readPasskeyChallengeCookie(c: Context<AppEnv>, settings: PasskeyCookieSettings, kind: CeremonyKind): string | undefined {
  return getCookie(c, nameOf(settings, kind));
}

export function clearPasskeyChallengeCookie(c: Context<AppEnv>, settings: PasskeyCookieSettings, kind: CeremonyKind): void {
  clearAnswerCookie(c, nameOf(settings, kind), { path: '/', secure: settings.secure, httpOnly: true, sameSite: 'Strict' });
}
