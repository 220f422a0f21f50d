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
