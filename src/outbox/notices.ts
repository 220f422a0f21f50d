/**
 * @module Security notices (ASVS 5.0 6.3.7): emails that tell an account's owner about a change
 * they may not have made. A notice carries no secret and no link that acts; it is queued through
 * the outbox like any email. Someone else can set some of them off (wrong passwords lock an
 * account), so each user has an allowance (RATE_LIMIT_SECURITY_NOTICE): past it, a notice is
 * dropped with a log line rather than queued, so nobody can flood a mailbox through us.
 */
import type { Language } from '../i18n/languages.js';
import type { TemplateOverrides } from './template-overrides.js';
import type { BackgroundTasks } from '../background.js';
import { AppError } from '../errors.js';
import type { RateLimits } from '../limits/rate-limits.js';
import type { Logger } from '../logger.js';
import type { Stores } from '../stores.js';
import { emitEvent } from '../webhooks/events.js';
import type { OutboxStore } from './outbox.js';
import { queueEmail } from './queue.js';
import { renderAccountLockedEmail, type RenderedEmail } from './templates.js';

export interface NoticeDeps {
  limits: RateLimits;
  logger: Logger;
}

/**
 * Counts one notice against the user's allowance: true when it may be sent. Asked before the
 * transaction that queues it (the limiter is not in the database). Any other failure of the
 * limiter propagates, as for the other limits.
 */
export async function mayNotify(deps: NoticeDeps, userId: string, template: RenderedEmail['template'], now: Date): Promise<boolean> {
  try {
    await deps.limits.consume('securityNotice', { userId }, now);
    return true;
  } catch (error) {
    if (!(error instanceof AppError) || error.code !== 'rate_limited') throw error;
    deps.logger.info({ userId, template }, 'security notice not sent: the user reached RATE_LIMIT_SECURITY_NOTICE');
    return false;
  }
}

/** Queues `email` to `recipient` when the user's allowance permits; true when queued. */
export async function queueSecurityNotice(
  deps: NoticeDeps,
  outbox: Pick<OutboxStore, 'enqueueEmail'>,
  to: { userId: string; email: string },
  email: RenderedEmail,
  now: Date,
): Promise<boolean> {
  if (!(await mayNotify(deps, to.userId, email.template, now))) return false;
  await queueEmail(outbox, to.email, email, { now, linkExpiresAt: null });
  return true;
}

/** What the account-locked notice says and needs: the lock's rule, and where to send. */
export interface LockNoticeDeps extends NoticeDeps {
  appName: string;
  /** DEFAULT_LANGUAGE: the language of emails to an account that has none. */
  defaultLanguage?: Language;
  /** EMAIL_TEMPLATES_DIR's overrides (config.emailTemplates): each email asks them first. */
  emailTemplates?: TemplateOverrides | null;
  baseUrl: string;
  maxFailures: number;
  lockedForMinutes: number;
  /** LOCKOUT_DURATION in seconds: when the lock ends, for the `user.locked` event. */
  lockedForSeconds: number;
  onEmailQueued: () => void;
}

/**
 * Tells the owner that failures locked their account (a wrong password at login or at
 * re-authentication, a wrong second-factor code), and reports `user.locked` (webhooks/events.ts)
 * in the transaction that queues the notice. Called once per lock, by the failure that starts it.
 * Off the response path: the answer to the failure that starts a lock must take the same time
 * whether or not the email has an account. The event is reported on every lock, also when the
 * notice is past the owner's allowance or the account has no address to send it to.
 */
export function noticeAccountLocked(
  deps: { notices: LockNoticeDeps; background: BackgroundTasks; stores: Pick<Stores, 'outbox' | 'webhookEvents' | 'transaction'> },
  user: { id: string; email: string | null; language?: Language | null | undefined },
  now: Date,
): void {
  const recipient = user.email;
  const { notices } = deps;
  const lockedUntil = new Date(now.getTime() + notices.lockedForSeconds * 1000);
  deps.background.run('account locked notice', async () => {
    const email = renderAccountLockedEmail({
      appName: notices.appName,
      baseUrl: notices.baseUrl,
      failures: notices.maxFailures,
      lockedForMinutes: notices.lockedForMinutes,
      language: user.language,
      defaultLanguage: notices.defaultLanguage,
      emailTemplates: notices.emailTemplates,
    });
    // The allowance is asked before the transaction (the limiter is not in the database).
    const send = recipient !== null && (await mayNotify(notices, user.id, email.template, now));
    await deps.stores.transaction(async (tx) => {
      await emitEvent(tx, now, 'user.locked', user, { lockedUntil: lockedUntil.toISOString() });
      if (send) await queueEmail(tx.outbox, recipient, email, { now, linkExpiresAt: null });
    });
    if (send) notices.onEmailQueued();
  });
}
