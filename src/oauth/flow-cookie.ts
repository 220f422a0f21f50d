/**
 * @module The pending sign-in: state, PKCE verifier, OpenID nonce, provider and return path, carried by the
 * browser between the start and the callback in one HMAC-SHA256-signed value (key AUTH_SECRET).
 * The signature stops a client from planting its own state or return path; the expiry inside
 * the signed payload is checked against the injected clock, so the 10-minute limit (SPEC §3)
 * holds even if a browser keeps the cookie longer than its Max-Age.
 *
 * The PKCE verifier inside is sealed (AES-256-GCM, crypto/envelope.ts) under a key of its own,
 * derived from AUTH_SECRET by HKDF, and bound to this sign-in's state: whoever reads the cookie —
 * a log of request headers, a proxy, a script on a sibling page of a misconfigured host — learns
 * the state, the nonce and the return path, which also travel in URLs, but not the verifier, the
 * one value that turns an intercepted code into tokens (RFC 7636 §1).
 */
import { createEnvelope, type Envelope } from '../crypto/envelope.js';
import { deriveKey, hasValidSignature, signPayload } from '../crypto/mac.js';
import { z } from 'zod';

/** SPEC §3 and §8: the flow must be completed within 10 minutes. */
export const SIGN_IN_FLOW_LIFETIME_SECONDS = 10 * 60;

export interface PendingSignIn {
  provider: string;
  state: string;
  codeVerifier: string;
  /** Sent to an OpenID provider, which puts it in the ID token; GitHub ignores it. */
  nonce: string;
  returnTo: string;
  expiresAt: Date;
}

export type PendingSignInProblem = 'missing' | 'malformed' | 'bad_signature' | 'expired';

// Domain separation: a MAC made for this value can never be replayed as any other use of AUTH_SECRET.
const MAC_CONTEXT = 'gatehouse.oauth-pending-sign-in.v1:';
/** The HKDF label of the verifier's sealing key: no other use of AUTH_SECRET shares that key. */
const VERIFIER_KEY_LABEL = 'gatehouse oauth pkce verifier v1';

/** Seals verifiers under the key derived from `secret` (an HKDF per sign-in costs microseconds). */
const verifierEnvelope = (secret: string): Envelope => createEnvelope([Buffer.from(deriveKey(secret, VERIFIER_KEY_LABEL))]);

/** The sealed verifier belongs to this sign-in's state: moved into another pending sign-in, it does not open. */
const verifierBinding = (state: string): string => `oauth-pkce-verifier:${state}`;

const payloadSchema = z.object({
  p: z.string().min(1).max(64),
  s: z.string().min(1).max(128),
  // The sealed verifier: `v1.<key id>.<iv>.<ciphertext>.<tag>` (about 100 characters).
  c: z.string().min(1).max(512),
  n: z.string().min(43).max(128),
  r: z.string().min(1).max(4096),
  e: z.number().int().positive(),
});

export function sealPendingSignIn(secret: string, pending: PendingSignIn): string {
  const payload = Buffer.from(
    JSON.stringify({
      p: pending.provider,
      s: pending.state,
      c: verifierEnvelope(secret).seal(pending.codeVerifier, verifierBinding(pending.state)),
      n: pending.nonce,
      r: pending.returnTo,
      e: pending.expiresAt.getTime(),
    }),
    'utf8',
  ).toString('base64url');
  return `${payload}.${signPayload(secret, MAC_CONTEXT + payload)}`;
}

export function openPendingSignIn(
  secret: string,
  value: string | undefined,
  now: Date,
): { ok: true; pending: PendingSignIn } | { ok: false; problem: PendingSignInProblem } {
  if (value === undefined || value === '') return { ok: false, problem: 'missing' };
  const [payload, signature, extra] = value.split('.');
  if (payload === undefined || signature === undefined || extra !== undefined) return { ok: false, problem: 'malformed' };
  if (!hasValidSignature(secret, MAC_CONTEXT + payload, signature)) return { ok: false, problem: 'bad_signature' };
  let parsed: z.infer<typeof payloadSchema>;
  try {
    parsed = payloadSchema.parse(JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')));
  } catch {
    return { ok: false, problem: 'malformed' };
  }
  if (parsed.e <= now.getTime()) return { ok: false, problem: 'expired' };
  // Signed with this secret, so sealed with its key: only a cookie of an older format gets here.
  const codeVerifier = verifierEnvelope(secret).open(parsed.c, verifierBinding(parsed.s));
  if (codeVerifier === null) return { ok: false, problem: 'malformed' };
  return {
    ok: true,
    pending: {
      provider: parsed.p,
      state: parsed.s,
      codeVerifier,
      nonce: parsed.n,
      returnTo: parsed.r,
      expiresAt: new Date(parsed.e),
    },
  };
}
