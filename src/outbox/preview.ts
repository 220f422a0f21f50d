/**
 * @module `gatehouse mail preview`: one email as Gatehouse would queue it, with sample values (a
 * link on BASE_URL, a code), in a language, overrides from EMAIL_TEMPLATES_DIR applied. It renders
 * with the same functions the flows call and opens nothing: no SMTP server, no database, so a team
 * can check an override before the first person receives it.
 */
import { UsageError } from '../admin/cli.js';
import type { Config } from '../config.js';
import { isSupportedLanguage, SUPPORTED_LANGUAGES, type Language } from '../i18n/languages.js';
import {
  EMAIL_KINDS,
  renderAccountLockedEmail,
  renderAccountSecuredEmail,
  renderOrganizationInvitationEmail,
  renderEmailChangedEmail,
  renderEmailChangeEmail,
  renderEmailChangeRequestedEmail,
  renderEmailSignInEmail,
  renderPasswordChangedEmail,
  renderPasswordResetEmail,
  renderProviderLinkedEmail,
  renderVerificationEmail,
  type EmailKind,
  type EmailLanguage,
  type RenderedEmail,
} from './templates.js';

export const MAIL_PREVIEW_USAGE = `Usage: gatehouse mail preview --list
       gatehouse mail preview <kind> [--lang L] [--html]
  --list     the kinds of email (the names gatehouse outbox shows) and the placeholders each offers a template
  <kind>     print that email: "Subject: …", a blank line, then its text (--html: its HTML)
  --lang L   the language (${SUPPORTED_LANGUAGES.join(', ')}; default: DEFAULT_LANGUAGE)`;

/** A token's shape, never a real one: the link in a preview leads nowhere. */
const SAMPLE_TOKEN = 'sample-token-0000000000000000';
const SAMPLE_CODE = '123456';

type PreviewConfig = Pick<Readonly<Config>, 'baseUrl' | 'mail' | 'defaultLanguage' | 'emailTemplates'>;

/** Each kind's email with sample values, as its flow would render it. */
const SAMPLES: Readonly<Record<EmailKind, (config: PreviewConfig, language: EmailLanguage) => RenderedEmail>> = {
  email_verification: (c, l) =>
    renderVerificationEmail({ ...l, appName: c.mail.appName, url: `${c.baseUrl}/verify-email?token=${SAMPLE_TOKEN}`, lifetimeHours: 24 }),
  provider_linked: (c, l) => renderProviderLinkedEmail({ ...l, appName: c.mail.appName, providerName: 'GitHub', providerLogin: 'octocat', baseUrl: c.baseUrl }),
  email_sign_in: (c, l) =>
    renderEmailSignInEmail({ ...l, appName: c.mail.appName, url: `${c.baseUrl}/email-sign-in?token=${SAMPLE_TOKEN}`, code: SAMPLE_CODE, lifetimeMinutes: 15 }),
  password_reset: (c, l) =>
    renderPasswordResetEmail({ ...l, appName: c.mail.appName, url: `${c.baseUrl}/reset-password?token=${SAMPLE_TOKEN}`, lifetimeHours: 1 }),
  password_changed: (c, l) => renderPasswordChangedEmail({ ...l, appName: c.mail.appName, baseUrl: c.baseUrl, how: 'reset', firstPassword: false }),
  account_locked: (c, l) => renderAccountLockedEmail({ ...l, appName: c.mail.appName, baseUrl: c.baseUrl, failures: 5, lockedForMinutes: 15 }),
  email_change: (c, l) =>
    renderEmailChangeEmail({ ...l, appName: c.mail.appName, url: `${c.baseUrl}/confirm-email-change?token=${SAMPLE_TOKEN}`, lifetimeHours: 24 }),
  email_change_requested: (c, l) => renderEmailChangeRequestedEmail({ ...l, appName: c.mail.appName, newEmail: 'new@example.com', baseUrl: c.baseUrl }),
  email_changed: (c, l) => renderEmailChangedEmail({ ...l, appName: c.mail.appName, newEmail: 'new@example.com', baseUrl: c.baseUrl }),
  account_secured: (c, l) => renderAccountSecuredEmail({ ...l, appName: c.mail.appName, baseUrl: c.baseUrl }),
  organization_invitation: (c, l) =>
    renderOrganizationInvitationEmail({
      ...l,
      appName: c.mail.appName,
      url: `${c.baseUrl}/accept-invitation?token=${SAMPLE_TOKEN}`,
      organization: 'Acme',
      role: 'admin',
      lifetimeDays: 7,
    }),
};

const KINDS = Object.keys(EMAIL_KINDS) as EmailKind[];

/** One line a kind: its name and its placeholders. */
export function listEmailKinds(): string {
  return KINDS.map((kind) => `${kind}  ${EMAIL_KINDS[kind].map((name) => `{{${name}}}`).join(' ')}`).join('\n');
}

/** What `mail preview` prints for `args` (the words after `preview`); a UsageError for bad ones. */
export function mailPreview(config: PreviewConfig, args: readonly string[]): string {
  const usage = (message: string): UsageError => new UsageError(message, MAIL_PREVIEW_USAGE);
  if (args.length === 1 && args[0] === '--list') return `${listEmailKinds()}\n`;
  let kind: string | undefined;
  let lang: string | undefined;
  let asHtml = false;
  for (let at = 0; at < args.length; at += 1) {
    const arg = args[at] ?? '';
    if (arg === '--html') asHtml = true;
    else if (arg === '--lang') {
      lang = args[at + 1];
      at += 1;
      if (lang === undefined) throw usage('--lang: name a language');
    } else if (arg.startsWith('-')) throw usage(`unknown option "${arg}"`);
    else if (kind === undefined) kind = arg;
    else throw usage(`one kind at a time; "${arg}" is one too many`);
  }
  if (kind === undefined) throw usage('name a kind of email, or --list');
  if (!Object.hasOwn(SAMPLES, kind)) throw usage(`unknown kind "${kind}"; the kinds are ${KINDS.join(', ')}`);
  if (lang !== undefined && !isSupportedLanguage(lang)) throw usage(`unknown language "${lang}"; the languages are ${SUPPORTED_LANGUAGES.join(', ')}`);
  const language: Language = lang ?? config.defaultLanguage;
  const email = SAMPLES[kind as EmailKind](config, { language, emailTemplates: config.emailTemplates });
  const body = asHtml ? email.html : email.text;
  return `Subject: ${email.subject}\n\n${body}${body.endsWith('\n') ? '' : '\n'}`;
}
