/**
 * @module The emails Gatehouse queues, as text and HTML. Each names the product (APP_NAME) and
 * its link's lifetime. Everything interpolated into HTML is escaped.
 */
import { escapeHtml } from '../escape-html.js';
import type { EmailTemplate } from './outbox.js';

export interface RenderedEmail {
  template: EmailTemplate;
  subject: string;
  text: string;
  html: string;
}

function lifetimeWords(hours: number): string {
  return hours === 1 ? '1 hour' : `${hours} hours`;
}

interface EmailContent {
  template: EmailTemplate;
  subject: string;
  intro: string[];
  action: string;
  url: string;
  outro: string[];
}

function render(content: EmailContent): RenderedEmail {
  const text = ['Hello,', '', ...content.intro, content.url, '', ...content.outro].join('\n');
  const paragraphs = (lines: string[]): string => lines.map((line) => `<p>${escapeHtml(line)}</p>`).join('\n');
  const url = escapeHtml(content.url);
  const html = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(content.subject)}</title></head>
<body style="font-family: system-ui, sans-serif; line-height: 1.5; color: #1a1a1a;">
<p>Hello,</p>
${paragraphs(content.intro)}
<p><a href="${url}" style="display: inline-block; padding: 10px 16px; background: #1d4ed8; color: #ffffff; border-radius: 6px; text-decoration: none;">${escapeHtml(content.action)}</a></p>
<p style="font-size: 0.9em;">Or copy this address into your browser:<br>${url}</p>
${paragraphs(content.outro)}
</body></html>
`;
  return { template: content.template, subject: content.subject, text, html };
}

export function renderVerificationEmail(options: { appName: string; url: string; lifetimeHours: number }): RenderedEmail {
  return render({
    template: 'email_verification',
    subject: `Confirm your email address for ${options.appName}`,
    intro: [`Please confirm the email address of your ${options.appName} account by opening this link and pressing "Confirm":`],
    action: 'Confirm my email address',
    url: options.url,
    outro: [
      `The link works once and expires in ${lifetimeWords(options.lifetimeHours)}.`,
      'If you did not create this account, someone else used your address. Open the link and press "I did not create this account": the account and everything set up with it are deleted.',
    ],
  });
}

/** A security notice (ASVS 5.0 6.3.7): a sign-in provider was linked to the account. No secret inside. */
export function renderProviderLinkedEmail(options: { appName: string; providerName: string; providerLogin: string; baseUrl: string }): RenderedEmail {
  return render({
    template: 'provider_linked',
    subject: `${options.providerName} sign-in was linked to your ${options.appName} account`,
    intro: [
      `Someone signed in to your ${options.appName} account with the ${options.providerName} account "${options.providerLogin}", which has the same verified email address, and linked it to your account.`,
      'Every other session of your account was signed out.',
      `If this was not you, someone controls a ${options.providerName} account with your verified email address. Secure that address first, then choose a new password here, and ask the administrators of ${options.appName} to remove the link: a new password alone does not remove it.`,
    ],
    action: 'Choose a new password',
    url: `${options.baseUrl}/forgot-password`,
    outro: [`If it was you, there is nothing to do: you can now sign in with ${options.providerName} too.`],
  });
}

/** The link and the code carry the same sign-in: either works, once. The code is never in the subject (kept after the body is purged). */
export function renderEmailSignInEmail(options: { appName: string; url: string; code: string; lifetimeMinutes: number }): RenderedEmail {
  return render({
    template: 'email_sign_in',
    subject: `Sign in to ${options.appName}`,
    intro: [`Someone asked to sign in to ${options.appName} with this email address.`, 'To sign in, open this link:'],
    action: 'Sign in',
    url: options.url,
    outro: [
      `Or enter this code on the sign-in page: ${options.code}`,
      `The link and the code expire in ${options.lifetimeMinutes} minutes, and using either one spends both.`,
      'If it was not you, ignore this email: nobody can sign in without it.',
    ],
  });
}

export function renderPasswordResetEmail(options: { appName: string; url: string; lifetimeHours: number }): RenderedEmail {
  return render({
    template: 'password_reset',
    subject: `Reset your ${options.appName} password`,
    intro: [`Someone asked to reset the password of the ${options.appName} account with this email address.`, 'To choose a new password, open this link:'],
    action: 'Choose a new password',
    url: options.url,
    outro: [
      `The link works once and expires in ${lifetimeWords(options.lifetimeHours)}.`,
      'If it was not you, ignore this email: your password stays as it is.',
    ],
  });
}

/**
 * A security notice: the account's password was set or replaced through a reset link. For an
 * account that had none (provider sign-in only), a new way in was added: said in so many words.
 */
export function renderPasswordChangedEmail(options: { appName: string; baseUrl: string; how: 'reset' | 'change'; firstPassword: boolean }): RenderedEmail {
  const what = options.firstPassword
    ? `A password was set on your ${options.appName} account, which until now had none: it can now be signed in to with this email address and that password.`
    : `The password of your ${options.appName} account was changed.`;
  const how = options.how === 'reset' ? 'It was done with a password reset link sent to this address.' : 'It was done from a signed-in session.';
  return render({
    template: 'password_changed',
    subject: options.firstPassword ? `A password was set on your ${options.appName} account` : `Your ${options.appName} password was changed`,
    intro: [what, how, 'Every other session of your account was signed out.'],
    action: 'Choose a new password',
    url: `${options.baseUrl}/forgot-password`,
    outro: [
      'If it was you, there is nothing to do.',
      'If it was not you, someone can read this mailbox or knew your password: secure this email account first, then choose a new password here.',
    ],
  });
}

/** A security notice: failed sign-ins locked the account for a while. Says what happened and that the password still holds. */
export function renderAccountLockedEmail(options: { appName: string; baseUrl: string; failures: number; lockedForMinutes: number }): RenderedEmail {
  return render({
    template: 'account_locked',
    subject: `Sign-in to your ${options.appName} account was paused`,
    intro: [
      `After ${options.failures} failed sign-in attempts with a wrong password, sign-in with a password to your ${options.appName} account is paused for ${options.lockedForMinutes} minutes.`,
      'Nobody signed in: the attempts failed. A browser that signed in to your account before can still sign in during the pause.',
    ],
    action: 'Choose a new password',
    url: `${options.baseUrl}/forgot-password`,
    outro: [
      'If it was you, wait and try again, or choose a new password with the link above.',
      'If it was not you, someone is guessing your password. A long password used nowhere else keeps them out; you can choose one with the link above.',
    ],
  });
}

/** The link that moves an account to a new address, sent to that address: following it proves control of it. */
export function renderEmailChangeEmail(options: { appName: string; url: string; lifetimeHours: number }): RenderedEmail {
  return render({
    template: 'email_change',
    subject: `Confirm your new email address for ${options.appName}`,
    intro: [`Someone asked to move a ${options.appName} account to this email address. To confirm it, open this link and press "Confirm":`],
    action: 'Confirm my new email address',
    url: options.url,
    outro: [`The link works once and expires in ${lifetimeWords(options.lifetimeHours)}.`, 'If you did not ask for this, ignore this email: nothing changes.'],
  });
}

/** A security notice to the old address: a change away from it was asked for (it happens only if the new address confirms). */
export function renderEmailChangeRequestedEmail(options: { appName: string; newEmail: string; baseUrl: string }): RenderedEmail {
  return render({
    template: 'email_change_requested',
    subject: `A change of your ${options.appName} email address was requested`,
    intro: [
      `Someone signed in to your ${options.appName} account asked to move it to the address ${options.newEmail}. It changes only once a link sent there is followed.`,
    ],
    action: 'Choose a new password',
    url: `${options.baseUrl}/forgot-password`,
    outro: [
      'If it was you, there is nothing to do here.',
      'If it was not you, someone knows your password: choose a new one with the link above, which also signs every session out.',
    ],
  });
}

/** A security notice to the old address: the account now uses another one. */
export function renderEmailChangedEmail(options: { appName: string; newEmail: string; baseUrl: string }): RenderedEmail {
  return render({
    template: 'email_changed',
    subject: `Your ${options.appName} email address was changed`,
    intro: [`Your ${options.appName} account now uses the address ${options.newEmail}. Emails about it, password reset links included, go there from now on.`],
    action: `Open ${options.appName}`,
    url: `${options.baseUrl}/login`,
    outro: ['If it was you, there is nothing to do.', `If it was not you, contact the administrators of ${options.appName} at once.`],
  });
}

/**
 * The first sign-in by a proof of the mailbox removed a password chosen before the address was
 * proved, with what was set up through it: the person learns why it is gone and how to choose one.
 */
export function renderAccountSecuredEmail(options: { appName: string; baseUrl: string }): RenderedEmail {
  return render({
    template: 'account_secured',
    subject: `Your ${options.appName} account was secured`,
    intro: [
      `You just signed in to ${options.appName} by proving that this email address is yours.`,
      'Its password had been chosen before the address was confirmed, so it may have been set by someone else who registered your address. We removed that password, and with it the passkeys, two-factor settings, pending email change and sessions that were set up through it.',
      'To sign in with a password again, choose a new one:',
    ],
    action: 'Choose a new password',
    url: `${options.baseUrl}/forgot-password`,
    outro: ['If you set that password yourself, nothing is wrong: choose a new one and set up your passkeys and two-factor sign-in again.'],
  });
}
