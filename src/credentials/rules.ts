/**
 * @module The spec's password rules (SPEC §2) and the email rules, as zod schemas.
 * Passwords are NFKC-normalised first (DESIGN §5), so "Ｐａｓｓ" and "Pass" are one password, and
 * length counts Unicode code points, so a password in any script is measured as a person would.
 */
import { z } from 'zod';
import { COMMON_PASSWORD_MESSAGE, isCommonPassword } from './common-passwords.js';

export const PASSWORD_MIN_LENGTH = 8;
export const PASSWORD_MAX_LENGTH = 128;
export const EMAIL_MAX_LENGTH = 254;

export function normalizePassword(password: string): string {
  return password.normalize('NFKC');
}

/** The broken rules, in words a person understands; empty when the password is acceptable. */
export function checkPasswordRules(password: string): string[] {
  const normalized = normalizePassword(password);
  const length = [...normalized].length;
  const broken: string[] = [];
  if (length < PASSWORD_MIN_LENGTH) broken.push(`must be at least ${PASSWORD_MIN_LENGTH} characters`);
  if (length > PASSWORD_MAX_LENGTH) broken.push(`must be at most ${PASSWORD_MAX_LENGTH} characters`);
  if (!/\p{Lu}/u.test(normalized)) broken.push('must contain an uppercase letter');
  if (!/\p{Ll}/u.test(normalized)) broken.push('must contain a lowercase letter');
  if (!/\p{Nd}/u.test(normalized)) broken.push('must contain a digit');
  if (!/[^\p{L}\p{N}]/u.test(normalized)) broken.push('must contain a special character');
  return broken;
}

/**
 * A new password: every broken rule becomes its own issue on the field, and so does being a
 * common password (common-passwords.ts). The flows add the context words (the app's name, the
 * email), which the field alone does not know.
 */
export const newPasswordSchema = z
  .string()
  .superRefine((password, ctx) => {
    for (const message of checkPasswordRules(password)) ctx.addIssue({ code: 'custom', message });
    if (password.length <= PASSWORD_MAX_LENGTH * 4 && isCommonPassword(password)) ctx.addIssue({ code: 'custom', message: COMMON_PASSWORD_MESSAGE });
  })
  // For the OpenAPI document (its JSON Schema), which cannot express the rules above: their length
  // bounds, in code points as JSON Schema counts them (the rules count after NFKC normalisation).
  .meta({ minLength: PASSWORD_MIN_LENGTH, maxLength: PASSWORD_MAX_LENGTH });

/**
 * A password offered at login is only bounded, not checked against the rules: rules may have
 * changed since it was set, and a rule-breaking password must fail as "invalid credentials",
 * not reveal anything. The bound keeps hashing work per request fixed.
 */
export const loginPasswordSchema = z
  .string()
  .min(1, 'is required')
  .max(PASSWORD_MAX_LENGTH * 4, 'is too long');

/** Trimmed, lower-cased, at most 254 characters, and shaped like an address. */
export const emailSchema = z
  .string()
  .trim()
  .max(EMAIL_MAX_LENGTH, `must be at most ${EMAIL_MAX_LENGTH} characters`)
  .toLowerCase()
  .pipe(z.email('must be a valid email address'))
  // The document describes what a client sends, the pipe's input (a string): its format named here.
  .meta({ format: 'email' });
