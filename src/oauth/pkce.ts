/**
 * @module PKCE (RFC 7636), the state value and the OpenID nonce: the one-time secrets of a
 * provider sign-in. Each is 32 random bytes, base64url without padding — 43 characters, inside RFC 7636 §4.1's
 * 43–128 range for the verifier, and 256 bits of entropy as §7.1 recommends
 * (https://www.rfc-editor.org/rfc/rfc7636#section-4.1). The state is the CSRF defence of
 * RFC 6749 §10.12 (https://www.rfc-editor.org/rfc/rfc6749#section-10.12); the nonce binds an
 * OpenID Connect ID token to this one sign-in (OpenID Connect Core §15.5.2).
 */
import { createHash } from 'node:crypto';
import { randomBase64url, type RandomReader } from '../random.js';

export const PKCE_METHOD = 'S256';
const SECRET_BYTES = 32;

export function generateCodeVerifier(random: RandomReader): string {
  return randomBase64url(random, SECRET_BYTES);
}

export function generateState(random: RandomReader): string {
  return randomBase64url(random, SECRET_BYTES);
}

export function generateNonce(random: RandomReader): string {
  return randomBase64url(random, SECRET_BYTES);
}

/** S256: BASE64URL(SHA256(ASCII(code_verifier))), RFC 7636 §4.2. */
export function createCodeChallenge(codeVerifier: string): string {
  return createHash('sha256').update(codeVerifier, 'ascii').digest('base64url');
}
