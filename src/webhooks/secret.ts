/**
 * @module An endpoint's signing secret: `whsec_` and 32 random bytes in base64 (the Standard
 * Webhooks form receivers paste into their library), shown once and kept sealed with the envelope
 * bound to the endpoint, so the database holds nothing that signs. During the 24 h after a
 * rotation both secrets sign every attempt: the header carries both `v1,…` signatures.
 */
import { Webhook } from 'standardwebhooks';
import type { Envelope } from '../crypto/envelope.js';
import { randomBytes, type RandomReader } from '../random.js';

export const SECRET_PREFIX = 'whsec_';
const SECRET_BYTES = 32;
/** How long the secret before a rotation keeps signing beside the new one. */
export const ROTATION_OVERLAP_MS = 24 * 60 * 60 * 1000;

export function generateWebhookSecret(random: RandomReader): string {
  return SECRET_PREFIX + Buffer.from(randomBytes(random, SECRET_BYTES)).toString('base64');
}

function boundTo(endpointId: string): string {
  return `webhook:${endpointId}:secret`;
}

export function sealWebhookSecret(envelope: Envelope, endpointId: string, secret: string): string {
  return envelope.seal(secret, boundTo(endpointId));
}

/** The secret, or null when the sealed value does not open (a removed key, a row copied from another endpoint). */
export function openWebhookSecret(envelope: Envelope, endpointId: string, sealed: string): string | null {
  return envelope.open(sealed, boundTo(endpointId));
}

/** The sealed secrets that sign an attempt at `now`: the current one, and the previous one within its overlap. */
export interface EndpointSecrets {
  sealed: string;
  previousSealed: string | null;
  previousUntil: Date | null;
}

/**
 * The `webhook-signature` header for one attempt: a space-separated `v1,<base64>` per secret
 * that signs now. Null when no secret opens (the attempt fails with that reason, never unsigned).
 */
export function signatureHeader(
  envelope: Envelope,
  endpointId: string,
  secrets: EndpointSecrets,
  message: { id: string; timestamp: Date; payload: string },
  now: Date,
): string | null {
  const current = openWebhookSecret(envelope, endpointId, secrets.sealed);
  if (current === null) return null;
  const signing = [current];
  if (secrets.previousSealed !== null && secrets.previousUntil !== null && secrets.previousUntil.getTime() > now.getTime()) {
    const previous = openWebhookSecret(envelope, endpointId, secrets.previousSealed);
    if (previous !== null) signing.push(previous);
  }
  return signing.map((secret) => new Webhook(secret).sign(message.id, message.timestamp, message.payload)).join(' ');
}
