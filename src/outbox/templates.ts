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
