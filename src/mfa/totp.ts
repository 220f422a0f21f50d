/**
 * @module TOTP (RFC 6238): HMAC-SHA-1, 6 digits, 30-second steps, the step before and after the
 * current one accepted for clock drift. The one-time password itself is @oslojs/otp's HOTP (RFC
 * 4226) at the step's counter; this module only turns the injected clock into steps, so expiry
 * is tested by moving the clock, and says which step a code matched, so it can be spent once.
 */
import { decodeBase32IgnorePadding, encodeBase32NoPadding } from '@oslojs/encoding';
import { createTOTPKeyURI, generateHOTP, verifyHOTP } from '@oslojs/otp';
import { randomBytes, type RandomReader } from '../random.js';

export const TOTP_STEP_SECONDS = 30;
export const TOTP_DIGITS = 6;
/** 20 random bytes: the length of SHA-1's output, as RFC 4226 §4 recommends. */
const SECRET_BYTES = 20;
/** Steps accepted on either side of the current one. */
const DRIFT_STEPS = 1;

/** A new secret, base32 without padding, as authenticator apps read it. */
export function generateTotpSecret(random: RandomReader): string {
  return encodeBase32NoPadding(randomBytes(random, SECRET_BYTES));
}

export function totpStepAt(now: Date): number {
  return Math.floor(now.getTime() / 1000 / TOTP_STEP_SECONDS);
}

/** The `otpauth://totp/<issuer>:<account>?secret=…&issuer=…` address an authenticator app scans. */
export function totpUri(issuer: string, account: string, secret: string): string {
  return createTOTPKeyURI(issuer, account, decodeBase32IgnorePadding(secret), TOTP_STEP_SECONDS, TOTP_DIGITS);
}

/** The code of the step at `now`; for tests and the development-mode helpers, never sent anywhere. */
export function totpCodeAt(secret: string, now: Date): string {
  return generateHOTP(decodeBase32IgnorePadding(secret), BigInt(totpStepAt(now)), TOTP_DIGITS);
}

/** The step (current ± 1) whose code `code` is, or null. Each candidate is compared in constant time. */
export function matchTotpStep(secret: string, code: string, now: Date): number | null {
  if (!/^\d{6}$/.test(code)) return null;
  const key = decodeBase32IgnorePadding(secret);
  const current = totpStepAt(now);
  let matched: number | null = null;
  // Every candidate is checked, even after a match: the time taken says nothing about which one.
  for (let step = current - DRIFT_STEPS; step <= current + DRIFT_STEPS; step++) {
    if (verifyHOTP(key, BigInt(step), TOTP_DIGITS, code) && matched === null) matched = step;
  }
  return matched;
}
