/**
 * @module Sign in through an external provider: OAuth 2.0 authorization code flow with PKCE
 * (RFC 6749 §4.1, RFC 7636), and for OpenID Connect providers a nonce that the ID token must
 * carry. No hono, no Request: the routes carry cookies and redirects. Every provider, GitHub
 * included, is an OAuthProvider (provider.ts); nothing here names one.
 *
 * States (SPEC §3):
 *   (none) --start, provider unreachable--> 503 provider_unavailable (nothing is set)
 *   (none) --start--> pending (signed cookie: state, verifier, nonce, return path; 10 minutes)
 *   pending --callback, state equal, code exchanged, profile read--> signed in (session issued)
 *   pending --callback with a wrong/missing/expired state--> invalid_state (security event)
 *   pending --provider error on the redirect--> oauth_error
 *   pending --code exchange, ID token check or profile fetch fails--> oauth_failed
 * The cookie is cleared by the route whatever the outcome, and the state's digest is recorded
 * in the database when the state matches (a replay of the same pending sign-in, even with a
 * copied cookie, is invalid_state `replayed`), so a pending sign-in is used once.
 *
 * Linking (DESIGN §5), in order:
 *   1. an account linked to (provider, provider user id) → its user; tokens and login refreshed;
 *   2. a user whose email the provider reports as verified, from a provider whose word on that is
 *      trusted (OIDC_<ID>_TRUST_EMAIL) → link to that user. The link is a sign-in by a proof of
 *      the mailbox: when the account's password was chosen before the address was proved, someone
 *      else may have registered it first to wait for the owner (account pre-hijacking), and that
 *      password goes with everything set up through it (users/secure-unverified.ts) before the
 *      link is made. An account with two-factor sign-in on is linked, and its other sessions
 *      ended, only once the code step succeeds: until then the link waits in a row keyed by the
 *      challenge (`holdPendingLink`, `completePendingLink`);
 *   3. otherwise a new user, with the provider's email only when the provider verified it and is
 *      trusted to.
 */
import { createHash, randomUUID, timingSafeEqual } from 'node:crypto';
import type { AuditMetadata, AuditStore } from '../audit/audit-log.js';
import { recordAudit } from '../audit/record.js';
import type { Envelope } from '../crypto/envelope.js';
import { ACCOUNT_DISABLED_MESSAGE, AppError, notFound } from '../errors.js';
import { emailSchema } from '../credentials/rules.js';
import { oneLine } from '../plain-text.js';
import type { RandomReader } from '../random.js';
import type { RequestContext } from '../request-context.js';
import { issueSession, reportSessionsRevoked, type IssuedSession, type SessionDeps } from '../session/flow.js';
import type { SessionStore } from '../session/store.js';
import { secureForMailboxProof } from '../users/secure-unverified.js';
import type { User, UserStore } from '../users/user.js';
import { SIGN_IN_FLOW_LIFETIME_SECONDS, openPendingSignIn, sealPendingSignIn, type PendingSignIn } from './flow-cookie.js';
import { createCodeChallenge, generateCodeVerifier, generateNonce, generateState } from './pkce.js';
import { ProviderRequestError, describeProviderFailure, toSafeErrorCode, type OAuthProvider, type ProviderProfile, type ProviderTokens } from './provider.js';
import { resolveReturnTo } from '../http/return-to.js';
import type { AppAccessStore } from '../oidc-provider/store.js';
import type { AccountStore, ConsumedSignInStore, LinkedAccount, PendingLink } from './store.js';
import type { RateLimits } from '../limits/rate-limits.js';
import { sha256Hex } from '../crypto/digest.js';
import type { OutboxStore } from '../outbox/outbox.js';
import type { Logger } from '../logger.js';
import { isSecondFactorRequired } from '../credentials/second-factor.js';
import type { EmailChangeTokenStore } from '../account/store.js';
import type { RecoveryCodeStore, TotpStore } from '../mfa/store.js';
import type { PasskeyStore } from '../passkeys/store.js';
import { mayNotify, queueSecurityNotice } from '../outbox/notices.js';
import { queueEmail } from '../outbox/queue.js';
import type { Language } from '../i18n/languages.js';
import type { TemplateOverrides } from '../outbox/template-overrides.js';
import { renderAccountSecuredEmail, renderProviderLinkedEmail } from '../outbox/templates.js';
import { emitEvent, type WebhookEventStore } from '../webhooks/events.js';

export interface OAuthStores {
  users: Pick<UserStore, 'findUserById' | 'findUserByEmail' | 'createUser' | 'recordLogin' | 'removePassword' | 'markEmailVerified'>;
  accounts: AccountStore;
  sessions: Pick<SessionStore, 'deleteUserSessionsReturningIds'>;
  audit: AuditStore;
  outbox: Pick<OutboxStore, 'enqueueEmail'>;
  totp: Pick<TotpStore, 'findTotp' | 'deleteTotp'>;
  recoveryCodes: Pick<RecoveryCodeStore, 'deleteRecoveryCodes'>;
  passkeys: Pick<PasskeyStore, 'listUserPasskeys' | 'deleteUserPasskeys'>;
  emailChangeTokens: Pick<EmailChangeTokenStore, 'deleteUserEmailChangeTokens'>;
  webhookEvents: WebhookEventStore;
  appAccess: Pick<AppAccessStore, 'notifyLogout' | 'revokeAccount'>;
  transaction<T>(work: (stores: OAuthStores) => Promise<T>): Promise<T>;
}

/** One sign-in provider with routes: usable, or off with the problems that name its variables. */
export interface ProviderSlot {
  id: string;
  displayName: string;
  /** null when one of its variables is missing or malformed; `problems` then names each one. */
  provider: OAuthProvider | null;
  problems: readonly string[];
}

/** What every provider shares: the pending sign-in's signing secret and the envelope for stored tokens. */
export interface OAuthSecrets {
  authSecret: string;
  envelope: Envelope;
}

/** The providers and secrets, built from the configuration by setup.ts. */
export interface OAuthSetup {
  /** Every provider with routes, usable or not (GitHub and each id of OIDC_PROVIDERS): any other id is a 404. */
  providers: ReadonlyMap<string, ProviderSlot>;
  /** null while AUTH_SECRET or ENCRYPTION_KEY_BASE64 is missing or malformed (every provider is then off). */
  secrets: OAuthSecrets | null;
}

export interface OAuthFlowDeps extends OAuthSetup {
  baseUrl: string;
  defaultReturnTo: string;
  random: RandomReader;
  stores: OAuthStores;
  session: SessionDeps;
  /** For the notice emailed when a provider is linked to an existing account, within the owner's allowance (outbox/notices.ts). */
  appName: string;
  /** EMAIL_TEMPLATES_DIR's overrides (config.emailTemplates): the notices ask them first. */
  emailTemplates?: TemplateOverrides | null;
  /** DEFAULT_LANGUAGE: the notice's language when the owner's account has none. */
  defaultLanguage?: Language;
  logger: Logger;
  onEmailQueued: () => void;
  /** RATE_LIMIT_OAUTH_CALLBACK, counted per client IP before any other work of the callback. */
  limits: RateLimits;
  /** Where each used pending sign-in is recorded, so that it is accepted once. */
  consumedSignIns: ConsumedSignInStore;
}

export interface StartedSignIn {
  authorizationUrl: string;
  /** The state sent to the provider, which comes back in the callback's query. */
  state: string;
  /** The signed pending sign-in, for an HttpOnly cookie. */
  pendingSignIn: string;
  maxAgeSeconds: number;
}

export interface CallbackInput {
  providerId: string;
  code: string | undefined;
  state: string | undefined;
  error: string | undefined;
  errorDescription: string | undefined;
  /** The callback's `iss` (RFC 9207): an OpenID provider checks it against its issuer. */
  issuer: string | undefined;
  /** The pending sign-in cookie as the browser sent it. */
  pendingSignIn: string | undefined;
  /**
   * Query parameters given more than once. They are refused, not read first-value-wins: a
   * callback URL with two `state`s or two `code`s was not made by the provider, and which value
   * a proxy, a framework or a log picks is anyone's guess (parameter pollution).
   */
  repeated: readonly string[];
}

export type SignInFailureCode = 'invalid_state' | 'oauth_error' | 'oauth_failed' | 'account_disabled';

export type CallbackOutcome =
  | { ok: true; user: User; session: IssuedSession; returnTo: string }
  /**
   * The account has two-factor sign-in on: no session yet, a challenge (mfa/challenge.ts) instead.
   * `pendingLink`: the provider account to link once the code step succeeds (`holdPendingLink`).
   */
  | { ok: true; secondFactorFor: User; firstMethod: string; returnTo: string; pendingLink: LinkedAccount | null }
  | { ok: false; error: SignInFailureCode; message: string };

function requireProvider(deps: OAuthFlowDeps, providerId: string): { provider: OAuthProvider; secrets: OAuthSecrets } {
  const slot = deps.providers.get(providerId);
  if (slot === undefined) throw notFound(`There is no sign-in provider named "${providerId}".`);
  if (slot.provider === null || deps.secrets === null) {
    // Names the variables (never their values) so an operator knows what to set (SPEC §5).
    throw new AppError('provider_not_configured', 503, `Sign-in with ${slot.displayName} is not configured: ${slot.problems.join('; ')}.`);
  }
  return { provider: slot.provider, secrets: deps.secrets };
}

/** The providers a person can sign in with (GET /providers): configured, with every variable valid. */
export function listSignInProviders(deps: Pick<OAuthFlowDeps, 'providers' | 'secrets'>): { id: string; name: string }[] {
  if (deps.secrets === null) return [];
  return [...deps.providers.values()].filter((slot) => slot.provider !== null).map((slot) => ({ id: slot.id, name: slot.displayName }));
}

/** Seconds a client should wait before starting again with a provider that did not answer. */
const PROVIDER_RETRY_AFTER_SECONDS = 30;

function callbackUri(deps: Pick<OAuthFlowDeps, 'baseUrl'>, provider: OAuthProvider): string {
  return `${deps.baseUrl}/api/auth/callback/${provider.id}`;
}

export async function startSignIn(deps: OAuthFlowDeps, providerId: string, rawReturnTo: string | undefined, ctx: RequestContext): Promise<StartedSignIn> {
  const { provider, secrets } = requireProvider(deps, providerId);
  const state = generateState(deps.random);
  const codeVerifier = generateCodeVerifier(deps.random);
  const nonce = generateNonce(deps.random);
  let authorizationUrl: URL;
  try {
    authorizationUrl = await provider.createAuthorizationURL({
      state,
      codeChallenge: createCodeChallenge(codeVerifier),
      nonce,
      redirectUri: callbackUri(deps, provider),
      now: ctx.now,
    });
  } catch (error) {
    if (!(error instanceof ProviderRequestError)) throw error;
    // An OpenID provider's discovery failed (unreachable, slow, or a broken document): the
    // sign-in cannot start, and nothing else is affected. The next start tries again.
    throw new AppError(
      'provider_unavailable',
      503,
      `Sign-in with ${provider.displayName} is unavailable right now (${describeProviderFailure(error.failure)}). Please try again in a moment.`,
      { retryAfterSeconds: PROVIDER_RETRY_AFTER_SECONDS },
    );
  }
  const pendingSignIn = sealPendingSignIn(secrets.authSecret, {
    provider: provider.id,
    state,
    codeVerifier,
    nonce,
    returnTo: resolveReturnTo(rawReturnTo, deps.defaultReturnTo),
    expiresAt: new Date(ctx.now.getTime() + SIGN_IN_FLOW_LIFETIME_SECONDS * 1000),
  });
  return { authorizationUrl: authorizationUrl.toString(), state, pendingSignIn, maxAgeSeconds: SIGN_IN_FLOW_LIFETIME_SECONDS };
}

/** Compares digests, so neither the length nor the content of the stored state leaks through timing. */
function isSameState(presented: string, expected: string): boolean {
  const a = createHash('sha256').update(presented).digest();
  const b = createHash('sha256').update(expected).digest();
  return timingSafeEqual(a, b);
}

/**
 * Why a callback is refused: the error of its `login_failure` row and of the login page, the
 * page's message, and what the row says besides the provider.
 */
class Refusal {
  constructor(
    readonly error: SignInFailureCode,
    readonly message: string,
    readonly metadata: AuditMetadata,
  ) {}
}

export async function completeSignIn(deps: OAuthFlowDeps, input: CallbackInput, ctx: RequestContext): Promise<CallbackOutcome> {
  const { provider, secrets } = requireProvider(deps, input.providerId);
  // Every failure happens before a user is known: the entry carries the provider and the reason.
  /** The failure's `login_failure` row (keyed to the user once one is known) and the login page's code. */
  const fail = async ({ error, message, metadata }: Refusal, userId: string | null = null): Promise<CallbackOutcome> => {
    await recordAudit(deps.stores.audit, ctx, 'login_failure', userId, { method: 'oauth', provider: provider.id, error, ...metadata });
    return { ok: false, error, message };
  };

  // In this order, each step before any work of the next: the rate limit, the pending sign-in
  // (its state, then its single use), the provider's answer, then the two provider requests.
  const overLimit = await refuseOverCallbackLimit(deps, provider, ctx);
  if (overLimit !== null) return fail(overLimit);
  const pending = await acceptPendingSignIn(deps, secrets, provider, input, ctx);
  if (pending instanceof Refusal) return fail(pending);
  const code = readAuthorizationCode(provider, input);
  if (code instanceof Refusal) return fail(code);
  const tokens = await exchangeCode(deps, provider, pending, code, input.issuer, ctx);
  if (tokens instanceof Refusal) return fail(tokens);
  const profile = await fetchProfile(provider, tokens, ctx);
  if (profile instanceof Refusal) return fail(profile);

  const { user, linkedBy, pendingLink } = await linkOrCreateUser(deps, secrets.envelope, provider, profile, tokens, ctx);
  if (linkedBy === 'verified_email' && pendingLink === null) deps.onEmailQueued();
  // Before a second factor is asked for; the login page says so in its own words (web/routes.ts).
  if (user.disabledAt !== null) return fail(new Refusal('account_disabled', ACCOUNT_DISABLED_MESSAGE, { reason: 'account_disabled' }), user.id);
  // The provider proved the first factor only: a 2FA account still owes its code (DESIGN §9.3).
  if (pendingLink !== null || (await isSecondFactorRequired(deps, user.id))) {
    return { ok: true, secondFactorFor: user, firstMethod: provider.id, returnTo: pending.returnTo, pendingLink };
  }
  const session = await issueSession(deps.session, user, ctx, [provider.id]);
  await recordAudit(deps.stores.audit, ctx, 'login_success', user.id, {
    method: 'oauth',
    provider: provider.id,
    providerUserId: profile.providerUserId,
    providerLogin: profile.login,
    linkedBy,
    email: user.email,
  });
  return { ok: true, user: { ...user, lastLoginAt: ctx.now }, session, returnTo: pending.returnTo };
}

/**
 * Before any other work: a client hammering the callback gets no code exchange and no provider
 * request out of us (RATE_LIMIT_OAUTH_CALLBACK, per client IP). Null while within the limit.
 */
async function refuseOverCallbackLimit(deps: Pick<OAuthFlowDeps, 'limits'>, provider: OAuthProvider, ctx: RequestContext): Promise<Refusal | null> {
  try {
    await deps.limits.consume('oauthCallback', { ip: ctx.ip }, ctx.now);
    return null;
  } catch (error) {
    if (!(error instanceof AppError) || error.code !== 'rate_limited') throw error;
    return new Refusal('oauth_failed', `Too many sign-in attempts with ${provider.displayName} from your network. Please wait a few minutes and try again.`, {
      reason: 'rate_limited',
    });
  }
}

/** The pending sign-in this browser started with `provider`, once its state matches and it was not used before. */
async function acceptPendingSignIn(
  deps: Pick<OAuthFlowDeps, 'consumedSignIns'>,
  secrets: OAuthSecrets,
  provider: OAuthProvider,
  input: CallbackInput,
  ctx: RequestContext,
): Promise<PendingSignIn | Refusal> {
  const name = provider.displayName;
  // The state is checked before anything else, the provider's error included: an answer that
  // does not belong to a sign-in this browser started is forged or stale (RFC 6749 §10.12).
  const opened = openPendingSignIn(secrets.authSecret, input.pendingSignIn, ctx.now);
  let reason: string | null = opened.ok ? null : opened.problem;
  if (input.repeated.includes('state')) reason = 'state_repeated';
  else if (opened.ok && opened.pending.provider !== provider.id) reason = 'provider_mismatch';
  else if (opened.ok && input.state === undefined) reason = 'state_missing';
  else if (opened.ok && !isSameState(input.state ?? '', opened.pending.state)) reason = 'state_mismatch';
  if (!opened.ok || reason !== null) {
    const message =
      reason === 'expired'
        ? `The sign-in with ${name} took longer than 10 minutes. Please try again.`
        : `The sign-in with ${name} could not be verified as started from this browser. Please try again.`;
    return new Refusal('invalid_state', message, { reason, security: true });
  }
  const { pending } = opened;
  // A pending sign-in is accepted once. The route clears its cookie, but a copy of the cookie
  // (or a second tab, or another instance) could present it again: the digest of its state is
  // recorded in the database until the sign-in would have expired, before any provider request.
  if (!(await deps.consumedSignIns.consumeSignIn(sha256Hex(pending.state), pending.expiresAt))) {
    return new Refusal('invalid_state', `The sign-in with ${name} was already used. Please try again.`, { reason: 'replayed', security: true });
  }
  return pending;
}

/** The authorization code of a callback in the expected form that reports no error. */
function readAuthorizationCode(provider: OAuthProvider, input: CallbackInput): string | Refusal {
  const name = provider.displayName;
  if (input.repeated.length > 0) {
    return new Refusal('oauth_failed', `The answer from ${name} was not in the expected form. Please try again.`, {
      reason: 'repeated_parameter',
      parameters: input.repeated.join(','),
    });
  }
  if (input.error !== undefined) {
    const providerError = toSafeErrorCode(input.error);
    const description = input.errorDescription === undefined ? '' : oneLine(input.errorDescription, 200);
    const message =
      providerError === 'access_denied'
        ? `The sign-in with ${name} was cancelled.`
        : `${name} reported an error (${providerError})${description ? `: ${description}` : '.'}`;
    return new Refusal('oauth_error', message, { reason: 'provider_error', providerError });
  }
  if (input.code === undefined || input.code === '') {
    return new Refusal('oauth_failed', `${name} sent no authorization code. Please try again.`, { reason: 'missing_code' });
  }
  return input.code;
}

async function exchangeCode(
  deps: Pick<OAuthFlowDeps, 'baseUrl'>,
  provider: OAuthProvider,
  pending: PendingSignIn,
  code: string,
  issuer: string | undefined,
  ctx: RequestContext,
): Promise<ProviderTokens | Refusal> {
  const name = provider.displayName;
  try {
    return await provider.exchangeCode({
      code,
      codeVerifier: pending.codeVerifier,
      redirectUri: callbackUri(deps, provider),
      state: pending.state,
      nonce: pending.nonce,
      issuer,
      now: ctx.now,
    });
  } catch (error) {
    if (!(error instanceof ProviderRequestError)) throw error;
    const detail = describeProviderFailure(error.failure);
    if (error.failure.kind === 'invalid_id_token') {
      // A token that is forged, replayed, or meant for another client or sign-in: worth a look.
      return new Refusal('oauth_failed', `The answer from ${name} could not be verified (${detail}). Please try again.`, {
        reason: 'id_token',
        detail,
        security: true,
      });
    }
    return new Refusal('oauth_failed', `${name} did not accept the sign-in (${detail}). Please try again.`, { reason: 'code_exchange', detail });
  }
}

async function fetchProfile(provider: OAuthProvider, tokens: ProviderTokens, ctx: RequestContext): Promise<ProviderProfile | Refusal> {
  try {
    return await provider.fetchProfile(tokens, ctx.now);
  } catch (error) {
    if (!(error instanceof ProviderRequestError)) throw error;
    const detail = describeProviderFailure(error.failure);
    return new Refusal('oauth_failed', `Your ${provider.displayName} profile could not be read (${detail}). Please try again.`, {
      reason: 'profile_fetch',
      detail,
    });
  }
}

/** A concurrent callback created the same link or email first: roll back and look again. */
class LinkRaceLost extends Error {}

const MAX_LINK_ATTEMPTS = 3;

type LinkedBy = 'existing_link' | 'verified_email' | 'new_user';

/** Who signs in, and — for an existing account with two-factor sign-in on — the link that waits for its code step. */
interface LinkOutcome {
  user: User;
  linkedBy: LinkedBy;
  /** Not created yet: `holdPendingLink` keeps it until the code step (null: nothing waits). */
  pendingLink: LinkedAccount | null;
}

/** What linking needs beyond the transaction's stores: where the owner's notice links to. */
type NoticeSettings = Pick<OAuthFlowDeps, 'appName' | 'emailTemplates' | 'defaultLanguage' | 'baseUrl' | 'limits' | 'logger'>;

async function linkOrCreateUser(
  deps: Pick<OAuthFlowDeps, 'stores' | 'appName' | 'emailTemplates' | 'baseUrl' | 'limits' | 'logger'>,
  envelope: Envelope,
  provider: OAuthProvider,
  profile: ProviderProfile,
  tokens: ProviderTokens,
  ctx: RequestContext,
): Promise<LinkOutcome> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await deps.stores.transaction((tx) => linkOnce(tx, deps, envelope, provider, profile, tokens, ctx));
    } catch (error) {
      // The unique index on (provider, provider_account_id) or users.email decided the race;
      // the next attempt finds the winner's row through case 1 or 2.
      if (!(error instanceof LinkRaceLost) || attempt >= MAX_LINK_ATTEMPTS) throw error;
    }
  }
}

function sealTokens(envelope: Envelope, accountId: string, tokens: ProviderTokens, now: Date) {
  return {
    // The account id and the field are the associated data: a ciphertext moved to another row
    // or swapped between the two columns does not decrypt.
    accessTokenEnc: envelope.seal(tokens.accessToken, `${accountId}.access_token`),
    refreshTokenEnc: tokens.refreshToken === null ? null : envelope.seal(tokens.refreshToken, `${accountId}.refresh_token`),
    accessTokenExpiresAt: tokens.accessTokenExpiresInSeconds === null ? null : new Date(now.getTime() + tokens.accessTokenExpiresInSeconds * 1000),
    scope: tokens.grantedScopes.join(' '),
  };
}

/** One provider sign-in being linked: whom the provider vouches for, and the tokens to keep. */
interface LinkRequest {
  provider: OAuthProvider;
  profile: ProviderProfile;
  tokens: ProviderTokens;
  envelope: Envelope;
  /** What the audit rows say of the provider account. */
  identity: { provider: string; providerUserId: string; providerLogin: string };
  ctx: RequestContext;
}

/** The three cases of linking (module comment), in their order, in one transaction. */
async function linkOnce(
  tx: OAuthStores,
  notice: NoticeSettings,
  envelope: Envelope,
  provider: OAuthProvider,
  profile: ProviderProfile,
  tokens: ProviderTokens,
  ctx: RequestContext,
): Promise<LinkOutcome> {
  const identity = { provider: provider.id, providerUserId: profile.providerUserId, providerLogin: profile.login };
  const request: LinkRequest = { provider, profile, tokens, envelope, identity, ctx };

  const existing = await tx.accounts.findAccount(provider.id, profile.providerUserId);
  if (existing !== null) return signInThroughExistingLink(tx, request, existing);

  const parsedEmail = profile.email === null ? null : emailSchema.safeParse(profile.email);
  // A provider not trusted on email (OIDC_<ID>_TRUST_EMAIL=false) is heard as if it had verified none.
  const verifiedEmail = provider.trustsEmail && profile.emailVerified && parsedEmail?.success ? parsedEmail.data : null;

  if (verifiedEmail !== null) {
    const owner = await tx.users.findUserByEmail(verifiedEmail);
    if (owner !== null) return linkToEmailOwner(tx, notice, request, owner, verifiedEmail);
  }
  return createUserWithLink(tx, request, verifiedEmail);
}

/** The row of a link not made yet, its tokens sealed under its own id. */
function newLinkedAccount({ provider, profile, tokens, envelope, ctx }: LinkRequest, userId: string): LinkedAccount {
  const id = randomUUID();
  return {
    id,
    userId,
    provider: provider.id,
    providerAccountId: profile.providerUserId,
    providerLogin: profile.login,
    ...sealTokens(envelope, id, tokens, ctx.now),
    createdAt: ctx.now,
    updatedAt: ctx.now,
  };
}

/** Case 1: the provider account is linked already; its tokens and login are refreshed. */
async function signInThroughExistingLink(tx: OAuthStores, { profile, tokens, envelope, ctx }: LinkRequest, existing: LinkedAccount): Promise<LinkOutcome> {
  await tx.accounts.updateAccountTokens(existing.id, {
    providerLogin: profile.login,
    ...sealTokens(envelope, existing.id, tokens, ctx.now),
    updatedAt: ctx.now,
  });
  const user = await tx.users.findUserById(existing.userId);
  if (user === null) throw new Error(`account ${existing.id} refers to a missing user`);
  await tx.users.recordLogin(user.id, ctx.now);
  // An existing link is no new proof of the mailbox: nothing else changes.
  return { user, linkedBy: 'existing_link', pendingLink: null };
}

/** Case 2: the provider vouches for the address of an account that exists: a sign-in by a proof of the mailbox. */
async function linkToEmailOwner(tx: OAuthStores, notice: NoticeSettings, request: LinkRequest, owner: User, verifiedEmail: string): Promise<LinkOutcome> {
  const { provider, identity, ctx } = request;
  let user = owner;
  // Account pre-hijacking defence (docs/security.md): a sign-in by a proof of the mailbox. An
  // account never verified, or whose password was chosen before the address was proved (and
  // not confirmed since from a browser signed in to it), may have been registered by someone
  // else waiting for the owner: nothing set up through that password survives the link.
  // Its sessions end on a proof of the mailbox: no reason of its own in the catalogue, `revoked`.
  const secured = await secureForMailboxProof(tx, owner, { now: ctx.now, sessionsRevokedReason: 'revoked' });
  if (secured !== null) {
    const ownerNotified =
      secured.passwordRemoved &&
      (await queueSecurityNotice(notice, tx.outbox, { userId: owner.id, email: verifiedEmail }, renderAccountSecuredEmail(notice), ctx.now));
    await recordAudit(tx.audit, ctx, 'config_updated', owner.id, {
      action: 'unverified_account_secured_for_provider_link',
      ...identity,
      email: verifiedEmail,
      // A verified address whose password was chosen before it was proved (and never confirmed since).
      ...(owner.emailVerified ? { passwordUnproven: true } : {}),
      ...secured,
      ownerNotified,
    });
    user = { ...owner, passwordHash: null, emailVerified: true, passwordUnproven: false };
  } else if (await isSecondFactorRequired({ stores: tx }, owner.id)) {
    // The provider proves the first factor only. Linking now would hand a new way in, and end
    // the owner's sessions, on the word of someone who may not hold the second factor: the
    // link waits for the code step (completePendingLink), and nothing is written yet.
    return { user: owner, linkedBy: 'verified_email', pendingLink: newLinkedAccount(request, owner.id) };
  } else {
    // A new way into an account that has an owner: every session open elsewhere ends (the new
    // one is issued after this), and the owner hears of it, in the same transaction. If the
    // provider account is not theirs, they learn it at once and can act; if it is, the email
    // says there is nothing to do.
    await endSessionsForNewLink(tx, notice, provider, identity, verifiedEmail, owner.id, ctx);
  }
  if ((await tx.accounts.createAccount(newLinkedAccount(request, user.id))) === 'already_linked') throw new LinkRaceLost();
  await emitEvent(tx, ctx.now, 'user.provider_linked', user, { provider: provider.id, providerLogin: identity.providerLogin });
  await tx.users.recordLogin(user.id, ctx.now);
  return { user, linkedBy: 'verified_email', pendingLink: null };
}

/** Case 3: a new user, signed in only through this provider account. */
async function createUserWithLink(tx: OAuthStores, request: LinkRequest, verifiedEmail: string | null): Promise<LinkOutcome> {
  const { identity, ctx } = request;
  // An email the provider did not verify is not stored: it would claim the address for
  // someone who never proved they own it, and block its owner from registering it.
  const user: User = {
    id: randomUUID(),
    email: verifiedEmail,
    emailVerified: verifiedEmail !== null,
    passwordHash: null,
    createdAt: ctx.now,
    lastLoginAt: null,
    disabledAt: null,
    passwordUnproven: false,
    // The provider's redirect back is a top-level GET: it carries the pages' language cookie.
    language: ctx.language ?? null,
  };
  if ((await tx.users.createUser(user)) === 'email_taken') throw new LinkRaceLost();
  if ((await tx.accounts.createAccount(newLinkedAccount(request, user.id))) === 'already_linked') throw new LinkRaceLost();
  await tx.users.recordLogin(user.id, ctx.now);
  // The sign-up's one event: the link it makes is part of it, not a `user.provider_linked` of its own.
  await emitEvent(tx, ctx.now, 'user.created', user, { method: signUpMethod(request.provider), emailVerified: user.emailVerified });
  await recordAudit(tx.audit, ctx, 'user_created', user.id, { method: 'oauth', ...identity, email: user.email });
  return { user, linkedBy: 'new_user', pendingLink: null };
}

/** `user.created`'s `method` for a provider sign-up: `github`, or `oidc:<id>` for an OpenID provider (no OIDC id may be `github`: oauth/settings.ts). */
function signUpMethod(provider: Pick<OAuthProvider, 'id'>): string {
  return provider.id === 'github' ? 'github' : `oidc:${provider.id}`;
}

/**
 * A provider account newly linked to an account that has an owner: the owner's other sessions end
 * and the owner is told (within their notice allowance), with the audit row that says so.
 */
async function endSessionsForNewLink(
  tx: OAuthStores,
  notice: NoticeSettings,
  provider: Pick<OAuthProvider, 'id' | 'displayName'>,
  identity: { provider: string; providerUserId: string; providerLogin: string },
  email: string,
  ownerId: string,
  ctx: RequestContext,
  extra: AuditMetadata = {},
): Promise<void> {
  const revokedIds = await tx.sessions.deleteUserSessionsReturningIds(ownerId, null);
  // No reason of its own in the catalogue: a new way in ends every session, as a revoke would.
  await reportSessionsRevoked(tx, ctx.now, { id: ownerId, email }, revokedIds, 'revoked');
  await tx.appAccess.revokeAccount(ownerId, ctx.now);
  const sessionsRevoked = revokedIds.length;
  const ownerNotified = await mayNotify(notice, ownerId, 'provider_linked', ctx.now);
  if (ownerNotified) {
    // In the owner's language, as every other email to them.
    const owner = await tx.users.findUserById(ownerId);
    await queueEmail(
      tx.outbox,
      email,
      renderProviderLinkedEmail({
        language: owner?.language ?? null,
        ...(notice.defaultLanguage === undefined ? {} : { defaultLanguage: notice.defaultLanguage }),
        appName: notice.appName,
        providerName: provider.displayName,
        providerLogin: identity.providerLogin,
        baseUrl: notice.baseUrl,
        emailTemplates: notice.emailTemplates,
      }),
      { now: ctx.now, linkExpiresAt: null },
    );
  }
  await recordAudit(tx.audit, ctx, 'config_updated', ownerId, {
    action: 'provider_linked_to_existing_account',
    ...identity,
    email,
    sessionsRevoked,
    ownerNotified,
    ...extra,
  });
}

/** What holding and completing a link that waits for the code step needs. */
export type PendingLinkDeps = Pick<OAuthFlowDeps, 'stores' | 'providers' | 'appName' | 'baseUrl' | 'limits' | 'logger' | 'onEmailQueued'>;

/**
 * Keeps the link of a 2FA account's provider sign-in (CallbackOutcome's `pendingLink`) under the
 * challenge just issued for it, until that challenge expires: only its code step links it.
 */
export async function holdPendingLink(deps: Pick<OAuthFlowDeps, 'stores'>, account: LinkedAccount, challenge: { id: string; expiresAt: Date }): Promise<void> {
  const link: PendingLink = { challengeId: challenge.id, account, expiresAt: challenge.expiresAt };
  await deps.stores.accounts.holdPendingLink(link);
}

/**
 * The code step of a provider sign-in succeeded (mfa/flow.ts `verifySecondFactor`, through the
 * hook gatehouse.ts passes it): the link held under its challenge is made now, the owner's other
 * sessions end and the owner is told — before the new session is issued. A challenge without a
 * held link (a password login, an existing link), or whose link expired, changes nothing.
 */
export async function completePendingLink(deps: PendingLinkDeps, challenge: { id: string; userId: string }, ctx: RequestContext): Promise<void> {
  const linked = await deps.stores.transaction(async (tx) => {
    const account = await tx.accounts.takePendingLink(challenge.id, ctx.now);
    // Held for the challenge's own user: anything else links nothing.
    if (account === null || account.userId !== challenge.userId) return false;
    const owner = await tx.users.findUserById(account.userId);
    if (owner === null || owner.email === null) return false;
    // Linked meanwhile by another sign-in (to this account or, after an unlink, to another): that one stands.
    if ((await tx.accounts.createAccount({ ...account, updatedAt: ctx.now })) === 'already_linked') return false;
    await emitEvent(tx, ctx.now, 'user.provider_linked', owner, { provider: account.provider, providerLogin: account.providerLogin });
    const provider = { id: account.provider, displayName: deps.providers.get(account.provider)?.displayName ?? account.provider };
    const identity = { provider: account.provider, providerUserId: account.providerAccountId, providerLogin: account.providerLogin };
    await endSessionsForNewLink(tx, deps, provider, identity, owner.email, owner.id, ctx, { afterSecondFactor: true });
    return true;
  });
  if (linked) deps.onEmailQueued();
}
