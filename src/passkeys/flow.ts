/**
 * @module Passkeys (DESIGN §9.4): WebAuthn credentials registered by a signed-in person and used
 * to sign in with nothing else — no email, no password, no second factor.
 *
 *   register: options (session + re-authentication) ──challenge cookie──► verify ──► stored
 *   sign in:  options (anyone) ─────────────────────challenge cookie──► verify ──► session ["passkey"]
 *
 * The verification itself is @simplewebauthn/server's (loaded on first use, DESIGN §10). Each
 * challenge is spent by the first verification that presents it, on any instance. A sign-in is
 * refused, with 401 and a `login_failure` row, for a missing, expired or spent challenge
 * (`passkey_challenge_invalid`), and for an unknown credential, another origin, a bad signature
 * or a signature counter that did not grow (`passkey_invalid`); a proved passkey of a disabled
 * account gets 403 `account_disabled` and the same row; every step is counted by the
 * per-IP limit RATE_LIMIT_PASSKEY_LOGIN. A passkey is a way into the account: the last one of an
 * account without a password or a provider cannot be removed.
 */
import { randomUUID } from 'node:crypto';
import { reauthenticate, type ReauthDeps } from '../credentials/reauthenticate.js';
import { recordAudit } from '../audit/record.js';
import { badRequest, conflict, forbidden, notFound, unauthorized, type AppError } from '../errors.js';
import type { RateLimits } from '../limits/rate-limits.js';
import { isSecondFactorRequired } from '../credentials/second-factor.js';
import type { ConsumedSignInStore } from '../oauth/store.js';
import type { RandomReader } from '../random.js';
import type { RequestContext } from '../request-context.js';
import { issueSession, refuseDisabledSignIn, type IssuedSession, type SessionDeps, type ValidSession } from '../session/flow.js';
import type { User } from '../users/user.js';
import { emitEvent } from '../webhooks/events.js';
import { issuePasskeyChallenge, PASSKEY_CHALLENGE_LIFETIME_MS, readPasskeyChallenge, spentChallengeKey } from './challenge.js';
import { isUsablePublicKey } from './public-key.js';
import type { RelyingParty } from './relying-party.js';
import type { PasskeyRecord } from './store.js';

export const PASSKEY_METHOD = 'passkey';
/** In `session.methods` beside `passkey`: the authenticator checked a PIN or biometric, so the passkey stands for two factors. */
export const USER_VERIFICATION_METHOD = 'user_verification';
const DEFAULT_NAME = 'Passkey';
/** The transports WebAuthn Level 3 names; anything else a client sends is dropped. */
const KNOWN_TRANSPORTS = new Set(['ble', 'cable', 'hybrid', 'internal', 'nfc', 'smart-card', 'usb']);

export interface PasskeyDeps extends ReauthDeps {
  random: RandomReader;
  limits: RateLimits;
  session: SessionDeps;
  relyingParty: RelyingParty;
  /** Signs the challenge cookie (challenge.ts). */
  challengeKey: Uint8Array;
  /** Where a presented challenge is recorded, so it works once. */
  spentChallenges: Pick<ConsumedSignInStore, 'consumeSignIn'>;
}

/** What a client sends back from `navigator.credentials.create()` (as @simplewebauthn/browser encodes it). */
export interface RegistrationResponseInput {
  id: string;
  rawId: string;
  type: string;
  response: { clientDataJSON: string; attestationObject: string; transports?: string[] | undefined };
  clientExtensionResults?: Record<string, unknown> | undefined;
  authenticatorAttachment?: string | undefined;
}

/** What a client sends back from `navigator.credentials.get()`. */
export interface AuthenticationResponseInput {
  id: string;
  rawId: string;
  type: string;
  response: { clientDataJSON: string; authenticatorData: string; signature: string; userHandle?: string | null | undefined };
  clientExtensionResults?: Record<string, unknown> | undefined;
  authenticatorAttachment?: string | undefined;
}

export interface PasskeyView {
  id: string;
  name: string;
  createdAt: string;
  lastUsedAt: string | null;
}

type WebAuthnServer = typeof import('@simplewebauthn/server');
let webAuthnServer: Promise<WebAuthnServer> | undefined;
/** Loaded on first use: most processes never see a passkey (DESIGN §10, memory). */
const loadWebAuthnServer = (): Promise<WebAuthnServer> => (webAuthnServer ??= import('@simplewebauthn/server'));
// Apart from the ceremonies: only a registration needs the helpers' CBOR decoder (1–3 MB more).
type WebAuthnHelpers = typeof import('@simplewebauthn/server/helpers');
let webAuthnHelpers: Promise<WebAuthnHelpers> | undefined;
const loadWebAuthnHelpers = (): Promise<WebAuthnHelpers> => (webAuthnHelpers ??= import('@simplewebauthn/server/helpers'));

function toView(passkey: PasskeyRecord): PasskeyView {
  return {
    id: passkey.id,
    name: passkey.name,
    createdAt: passkey.createdAt.toISOString(),
    lastUsedAt: passkey.lastUsedAt === null ? null : passkey.lastUsedAt.toISOString(),
  };
}

/** The user handle stored on the authenticator: the user id's UTF-8 bytes (no address, nothing personal). */
const userHandleOf = (userId: string): string => Buffer.from(userId, 'utf8').toString('base64url');

const challengeBytes = (challenge: string): Uint8Array<ArrayBuffer> => new Uint8Array(Buffer.from(challenge, 'base64url'));

// --- Registration -------------------------------------------------------------------------------

export async function startPasskeyRegistration(
  deps: PasskeyDeps,
  signedIn: ValidSession,
  currentPassword: string | undefined,
  ctx: RequestContext,
): Promise<{ options: unknown; challengeCookie: string }> {
  const { user } = signedIn;
  // As for two-factor sign-in (mfa/flow.ts): an unverified address may not be its owner's, and a
  // passkey a squatter adds would be a way into the account once its owner claims the address.
  if (user.email !== null && !user.emailVerified) throw forbidden('email_not_verified', 'Verify your email address before you add a passkey.');
  await reauthenticate(deps, user, signedIn.session, currentPassword, ctx);
  const existing = await deps.stores.passkeys.listUserPasskeys(user.id);
  if (existing.length >= MAX_PASSKEYS_PER_ACCOUNT) throw passkeyLimitReached();
  const { challenge, value } = issuePasskeyChallenge(deps.challengeKey, deps.random, { kind: 'register', userId: user.id, now: ctx.now });
  const { generateRegistrationOptions } = await loadWebAuthnServer();
  const options = await generateRegistrationOptions({
    rpName: deps.relyingParty.name,
    rpID: deps.relyingParty.id,
    userName: user.email ?? user.id,
    userDisplayName: user.email ?? '',
    userID: new Uint8Array(Buffer.from(user.id, 'utf8')),
    challenge: challengeBytes(challenge.challenge),
    timeout: PASSKEY_CHALLENGE_LIFETIME_MS,
    attestationType: 'none',
    excludeCredentials: existing.map((passkey) => ({ id: passkey.credentialId, transports: passkey.transports })),
    authenticatorSelection: { residentKey: 'required', requireResidentKey: true, userVerification: 'preferred' },
  });
  return { options, challengeCookie: value };
}

/**
 * Room for every device a person owns, several times over; a bound so that one account cannot
 * grow its rows (and each sign-in's lookups) without end.
 */
export const MAX_PASSKEYS_PER_ACCOUNT = 20;
const passkeyLimitReached = (): AppError =>
  conflict('passkey_limit_reached', `An account can hold at most ${MAX_PASSKEYS_PER_ACCOUNT} passkeys. Remove one you no longer use first.`);

const REGISTRATION_CHALLENGE_MESSAGE = 'This passkey setup has expired or was already used. Start adding the passkey again.';

export async function finishPasskeyRegistration(
  deps: PasskeyDeps,
  signedIn: ValidSession,
  challengeValue: string | undefined,
  input: { response: RegistrationResponseInput; name?: string | undefined },
  ctx: RequestContext,
): Promise<{ passkey: PasskeyView }> {
  const { user } = signedIn;
  const challenge = readPasskeyChallenge(deps.challengeKey, challengeValue, 'register', ctx.now);
  // Bound to the user who re-authenticated for it: another session's cookie opens nothing.
  if (challenge === null || challenge.userId !== user.id) throw badRequest('passkey_challenge_invalid', REGISTRATION_CHALLENGE_MESSAGE);
  if (!(await deps.spentChallenges.consumeSignIn(spentChallengeKey(challenge), challenge.expiresAt))) {
    throw badRequest('passkey_challenge_invalid', REGISTRATION_CHALLENGE_MESSAGE);
  }
  const { verifyRegistrationResponse } = await loadWebAuthnServer();
  let credential;
  try {
    const verified = await verifyRegistrationResponse({
      response: input.response as Parameters<WebAuthnServer['verifyRegistrationResponse']>[0]['response'],
      expectedChallenge: challenge.challenge,
      expectedOrigin: [...deps.relyingParty.origins],
      expectedRPID: deps.relyingParty.id,
      requireUserVerification: false,
    });
    if (!verified.verified) throw new Error('not verified');
    credential = verified.registrationInfo.credential;
    // The id a sign-in will name is the one the authenticator data holds; a browser reports the same.
    if (credential.id === '' || credential.id !== input.response.id) throw new Error('credential id differs from the response id');
    // A key no sign-in could verify against would still count as a way in (public-key.ts).
    const { isoCBOR } = await loadWebAuthnHelpers();
    if (!isUsablePublicKey(isoCBOR.decodeFirst<ReadonlyMap<number, unknown>>(credential.publicKey))) throw new Error('unusable public key');
  } catch (error) {
    throw badRequest('passkey_invalid', 'The passkey could not be verified. Try adding it again.', error);
  }
  const count = await deps.stores.passkeys.countUserPasskeys(user.id);
  // Counted again: several setups may have been started before any finished.
  if (count >= MAX_PASSKEYS_PER_ACCOUNT) throw passkeyLimitReached();
  const record: PasskeyRecord = {
    id: randomUUID(),
    userId: user.id,
    credentialId: credential.id,
    publicKey: Buffer.from(credential.publicKey).toString('base64url'),
    counter: credential.counter,
    transports: (input.response.response.transports ?? []).filter((transport) => KNOWN_TRANSPORTS.has(transport)),
    name: input.name ?? (count === 0 ? DEFAULT_NAME : `${DEFAULT_NAME} ${count + 1}`),
    createdAt: ctx.now,
    lastUsedAt: null,
  };
  const added = await deps.stores.transaction(async (tx) => {
    if ((await tx.passkeys.addPasskey(record)) === 'exists') return false;
    await emitEvent(tx, ctx.now, 'user.passkey_added', user, { passkeyId: record.id, name: record.name });
    return true;
  });
  if (!added) throw conflict('passkey_invalid', 'This passkey is registered already.');
  await recordAudit(deps.stores.audit, ctx, 'passkey_added', user.id, { passkeyId: record.id, name: record.name });
  return { passkey: toView(record) };
}

// --- Management ---------------------------------------------------------------------------------

export async function listPasskeys(deps: Pick<PasskeyDeps, 'stores'>, userId: string): Promise<PasskeyView[]> {
  return (await deps.stores.passkeys.listUserPasskeys(userId)).map(toView);
}

const NO_SUCH_PASSKEY = 'No such passkey.';

export async function renamePasskey(
  deps: ReauthDeps,
  signedIn: ValidSession,
  input: { id: string; name: string; currentPassword?: string | undefined },
  ctx: RequestContext,
): Promise<PasskeyView> {
  const { id, name } = input;
  // A passkey's name is what its owner goes by when removing the right one: a stolen session must
  // not be able to rename the owner's passkey and their own alike.
  await reauthenticate(deps, signedIn.user, signedIn.session, input.currentPassword, ctx);
  if (!(await deps.stores.passkeys.renamePasskey(signedIn.user.id, id, name))) throw notFound(NO_SUCH_PASSKEY);
  const renamed = (await deps.stores.passkeys.listUserPasskeys(signedIn.user.id)).find((passkey) => passkey.id === id);
  if (renamed === undefined) throw notFound(NO_SUCH_PASSKEY);
  await recordAudit(deps.stores.audit, ctx, 'passkey_renamed', signedIn.user.id, { passkeyId: id, name });
  return toView(renamed);
}

/** Removes a passkey, never the last way in: without a password or a linked provider another passkey must remain. */
export async function removePasskey(
  deps: ReauthDeps,
  signedIn: ValidSession,
  input: { id: string; currentPassword?: string | undefined },
  ctx: RequestContext,
): Promise<void> {
  const { user } = signedIn;
  const { id } = input;
  await reauthenticate(deps, user, signedIn.session, input.currentPassword, ctx);
  const removed = await deps.stores.transaction(async (tx) => {
    // Two removals at once (or a removal and an unlink) must not each count on the other's way in.
    await tx.users.lockUser(user.id);
    const current = await tx.users.findUserById(user.id);
    const passkeys = await tx.passkeys.listUserPasskeys(user.id);
    const passkey = passkeys.find((candidate) => candidate.id === id);
    if (current === null || passkey === undefined) throw notFound(NO_SUCH_PASSKEY);
    if (current.passwordHash === null && passkeys.length === 1 && (await tx.accounts.listUserAccounts(user.id)).length === 0) {
      throw conflict('last_sign_in_method', 'This is the only way to sign in to this account. Set a password, link a provider or add another passkey first.');
    }
    await tx.passkeys.deletePasskey(user.id, id);
    await emitEvent(tx, ctx.now, 'user.passkey_removed', user, { passkeyId: passkey.id, name: passkey.name });
    return passkey;
  });
  await recordAudit(deps.stores.audit, ctx, 'passkey_removed', user.id, { passkeyId: removed.id, name: removed.name });
}

// --- Sign-in ------------------------------------------------------------------------------------

/** Options for a sign-in with any passkey of this site (discoverable credentials: the authenticator names the account). */
export async function startPasskeyLogin(deps: PasskeyDeps, ctx: RequestContext): Promise<{ options: unknown; challengeCookie: string }> {
  await deps.limits.consume('passkeyLogin', { ip: ctx.ip }, ctx.now);
  const { challenge, value } = issuePasskeyChallenge(deps.challengeKey, deps.random, { kind: 'login', userId: null, now: ctx.now });
  const { generateAuthenticationOptions } = await loadWebAuthnServer();
  const options = await generateAuthenticationOptions({
    rpID: deps.relyingParty.id,
    challenge: challengeBytes(challenge.challenge),
    timeout: PASSKEY_CHALLENGE_LIFETIME_MS,
    userVerification: 'preferred',
    allowCredentials: [],
  });
  return { options, challengeCookie: value };
}

const CHALLENGE_MESSAGE = 'This passkey sign-in has expired or was already used. Try again.';
const INVALID_MESSAGE = 'This passkey is not recognised here. Sign in another way, or use another passkey.';

type FailureReason =
  | 'challenge_missing_or_expired'
  | 'challenge_reused'
  | 'challenge_mismatch'
  | 'unknown_credential'
  | 'user_handle_mismatch'
  | 'wrong_origin'
  | 'wrong_rp_id'
  | 'counter_regression'
  | 'bad_signature'
  | 'invalid_response';

/** The signature counter in authenticatorData (bytes 33–36, big-endian); null when it is too short to hold one. */
function counterOf(authenticatorData: string): number | null {
  const bytes = Buffer.from(authenticatorData, 'base64url');
  return bytes.length < 37 ? null : bytes.readUInt32BE(33);
}

/** The challenge clientDataJSON answers; null when it is not JSON with one. */
function challengeIn(clientDataJSON: string): string | null {
  try {
    const parsed = JSON.parse(Buffer.from(clientDataJSON, 'base64url').toString('utf8')) as { challenge?: unknown };
    return typeof parsed.challenge === 'string' ? parsed.challenge : null;
  } catch {
    return null;
  }
}

function reasonOf(error: unknown): FailureReason {
  const message = error instanceof Error ? error.message : '';
  if (/origin/i.test(message)) return 'wrong_origin';
  if (/rp ?id/i.test(message)) return 'wrong_rp_id';
  if (/challenge/i.test(message)) return 'challenge_mismatch';
  if (/counter/i.test(message)) return 'counter_regression';
  return 'invalid_response';
}

export type PasskeyLoginOutcome = { kind: 'session'; session: IssuedSession; user: User } | { kind: 'second_factor'; user: User };

/**
 * The second step of a passkey sign-in: the challenge cookie from the options and the
 * authenticator's assertion. A passkey is possession; with user verification (a PIN or a
 * biometric the authenticator checked) it is two factors, and the session says so
 * (`methods: ["passkey", "user_verification"]`). Without it, it is one factor: an account with
 * two-factor sign-in still owes the code step (`second_factor`), and a session without it says
 * only `["passkey"]`.
 */
export async function finishPasskeyLogin(
  deps: PasskeyDeps,
  challengeValue: string | undefined,
  response: AuthenticationResponseInput,
  ctx: RequestContext,
): Promise<PasskeyLoginOutcome> {
  await deps.limits.consume('passkeyLogin', { ip: ctx.ip }, ctx.now);
  const refuse = async (reason: FailureReason, user: User | null, passkey: PasskeyRecord | null): Promise<AppError> => {
    await recordAudit(deps.stores.audit, ctx, 'login_failure', user?.id ?? null, {
      method: PASSKEY_METHOD,
      reason,
      ...(user !== null ? { email: user.email } : {}),
      ...(passkey !== null ? { passkeyId: passkey.id } : {}),
    });
    const challengeProblem = reason === 'challenge_missing_or_expired' || reason === 'challenge_reused' || reason === 'challenge_mismatch';
    return challengeProblem ? unauthorized('passkey_challenge_invalid', CHALLENGE_MESSAGE) : unauthorized('passkey_invalid', INVALID_MESSAGE);
  };

  const challenge = readPasskeyChallenge(deps.challengeKey, challengeValue, 'login', ctx.now);
  if (challenge === null) throw await refuse('challenge_missing_or_expired', null, null);
  // Spent by the first verification that presents it, whatever its outcome: one try per challenge.
  if (!(await deps.spentChallenges.consumeSignIn(spentChallengeKey(challenge), challenge.expiresAt))) throw await refuse('challenge_reused', null, null);

  // The response must answer this challenge (a replayed response answers an older one).
  if (challengeIn(response.response.clientDataJSON) !== challenge.challenge) throw await refuse('challenge_mismatch', null, null);

  const passkey = await deps.stores.passkeys.findPasskeyByCredentialId(response.id);
  const user = passkey === null ? null : await deps.stores.users.findUserById(passkey.userId);
  if (passkey === null || user === null) throw await refuse('unknown_credential', null, null);
  const userHandle = response.response.userHandle;
  if (userHandle !== undefined && userHandle !== null && userHandle !== '' && userHandle !== userHandleOf(user.id)) {
    throw await refuse('user_handle_mismatch', user, passkey);
  }
  // Checked here too (the library refuses it as well) so the audit row names it exactly.
  const newCounter = counterOf(response.response.authenticatorData);
  if (newCounter !== null && (passkey.counter > 0 || newCounter > 0) && newCounter <= passkey.counter) throw await refuse('counter_regression', user, passkey);

  const { verifyAuthenticationResponse } = await loadWebAuthnServer();
  let verifiedCounter: number;
  let userVerified: boolean;
  try {
    const verified = await verifyAuthenticationResponse({
      response: response as Parameters<WebAuthnServer['verifyAuthenticationResponse']>[0]['response'],
      expectedChallenge: challenge.challenge,
      expectedOrigin: [...deps.relyingParty.origins],
      expectedRPID: deps.relyingParty.id,
      credential: { id: passkey.credentialId, publicKey: new Uint8Array(Buffer.from(passkey.publicKey, 'base64url')), counter: passkey.counter },
      requireUserVerification: false,
    });
    if (!verified.verified) throw await refuse('bad_signature', user, passkey);
    verifiedCounter = verified.authenticationInfo.newCounter;
    userVerified = verified.authenticationInfo.userVerified;
  } catch (error) {
    if (error instanceof Error && error.name === 'AppError') throw error;
    throw await refuse(reasonOf(error), user, passkey);
  }
  // A disabled account is refused once the passkey is proved (so the answer says nothing to a
  // stranger) and before anything of the sign-in is spent or recorded: no counter, no last login.
  if (user.disabledAt !== null) await refuseDisabledSignIn(deps.stores.audit, ctx, user, { method: PASSKEY_METHOD, email: user.email, passkeyId: passkey.id });
  // Of two sign-ins with one counter value (a cloned authenticator, a replay on another instance), one wins.
  if (!(await deps.stores.passkeys.usePasskey(passkey.id, passkey.counter, verifiedCounter, ctx.now))) throw await refuse('counter_regression', user, passkey);

  // The passkey is spent (its counter moved) either way: the code step carries the sign-in on.
  if (!userVerified && (await isSecondFactorRequired(deps, user.id))) return { kind: 'second_factor', user };

  await deps.stores.users.recordLogin(user.id, ctx.now);
  const session = await issueSession(deps.session, user, ctx, userVerified ? [PASSKEY_METHOD, USER_VERIFICATION_METHOD] : [PASSKEY_METHOD]);
  await recordAudit(deps.stores.audit, ctx, 'login_success', user.id, { email: user.email, method: PASSKEY_METHOD, passkeyId: passkey.id, userVerified });
  return { kind: 'session', session, user };
}
