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
import { hkdfSync } from 'node:crypto';
import type { Context } from 'hono';
import { getCookie } from 'hono/cookie';
import { sha256Hex } from '../crypto/digest.js';
import { hasValidSignature, signPayload } from '../crypto/mac.js';
import { addAnswerCookie, clearAnswerCookie } from '../http/answer.js';
import type { AppEnv } from '../http/env.js';
import { randomBase64url, type RandomReader } from '../random.js';

export const PASSKEY_CHALLENGE_LIFETIME_MS = 5 * 60 * 1000;
const VERSION = 'v1';
const MAX_COOKIE_LENGTH = 1024;

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
  return new Uint8Array(hkdfSync('sha256', jwtSecret, '', 'gatehouse passkey challenge v1', 32));
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
  const payload = Buffer.from(JSON.stringify({ k: challenge.kind, c: challenge.challenge, u: challenge.userId, e: challenge.expiresAt.getTime() })).toString(
    'base64url',
  );
  return { challenge, value: `${VERSION}.${payload}.${signPayload(key, `${VERSION}.${payload}`)}` };
}

/** The challenge in `value` when its signature holds, it is of `kind` and has not expired; null otherwise. */
export function readPasskeyChallenge(key: Uint8Array, value: string | undefined, kind: CeremonyKind, now: Date): PasskeyChallenge | null {
  if (value === undefined || value.length > MAX_COOKIE_LENGTH) return null;
  const [version, payload, signature, ...rest] = value.split('.');
  if (version !== VERSION || payload === undefined || signature === undefined || rest.length > 0) return null;
  if (!hasValidSignature(key, `${version}.${payload}`, signature)) return null;
  try {
    const parsed = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as { k: unknown; c: unknown; u: unknown; e: unknown };
    if (parsed.k !== kind || typeof parsed.c !== 'string' || typeof parsed.e !== 'number' || parsed.e <= now.getTime()) return null;
    if (parsed.u !== null && typeof parsed.u !== 'string') return null;
    return { kind, challenge: parsed.c, userId: parsed.u, expiresAt: new Date(parsed.e) };
  } catch {
    return null;
  }
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
