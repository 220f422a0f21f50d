/**
 * @module The pending sign-in: state, PKCE verifier, OpenID nonce, provider and return path, carried by the
 * browser between the start and the callback in one HMAC-SHA256-signed value (key AUTH_SECRET).
 * The signature stops a client from planting its own state or return path; the expiry inside
 * the signed payload is checked against the injected clock, so the 10-minute limit (SPEC §3)
 * holds even if a browser keeps the cookie longer than its Max-Age.
 *
 * The value is signed, not encrypted: it sits in an HttpOnly cookie of the very browser that
 * runs the flow, and the verifier is worthless without the one-time code the provider sends to
 * our callback (RFC 7636 §1 threat model).
 */
import { hasValidSignature, signPayload } from '../crypto/mac.js';
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

const payloadSchema = z.object({
  p: z.string().min(1).max(64),
  s: z.string().min(1).max(128),
  c: z.string().min(43).max(128),
  n: z.string().min(43).max(128),
  r: z.string().min(1).max(4096),
  e: z.number().int().positive(),
});

export function sealPendingSignIn(secret: string, pending: PendingSignIn): string {
  const payload = Buffer.from(
    JSON.stringify({
      p: pending.provider,
      s: pending.state,
      c: pending.codeVerifier,
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
  return {
    ok: true,
    pending: {
      provider: parsed.p,
      state: parsed.s,
      codeVerifier: parsed.c,
      nonce: parsed.n,
      returnTo: parsed.r,
      expiresAt: new Date(parsed.e),
    },
  };
}
