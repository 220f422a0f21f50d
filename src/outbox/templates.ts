/**
 * @module The emails Gatehouse queues, as text and HTML, in the recipient account's language:
 * every sentence is a catalog message (`email.<kind>.*` in src/i18n/catalogs/en.ts), chosen by
 * `language` (the account's; null or absent: `defaultLanguage`, which callers set from
 * DEFAULT_LANGUAGE; absent too: English). Each names the product (APP_NAME) and its link's
 * lifetime. Everything interpolated into HTML is escaped, once: catalog lookups do not escape.
 *
 * `EMAIL_KINDS` lists each kind with the variables it offers: the one place a per-language
 * override (a mustache template from EMAIL_TEMPLATES_DIR) learns what it may use.
 */
import { escapeHtml } from '../escape-html.js';
import { directionOf, type Language } from '../i18n/languages.js';
import { translator, type MessageVars, type Translate } from '../i18n/translator.js';
import type { EmailTemplate } from './outbox.js';
import type { TemplateOverrides } from './template-overrides.js';

export interface RenderedEmail {
  template: EmailTemplate;
  /** The language it was written in. */
  language: Language;
  subject: string;
  text: string;
  html: string;
}

/** Which language an email is written in: the recipient account's, else the deployment's default. */
export interface EmailLanguage {
  /** The recipient account's language; null or absent: none known. */
  language?: Language | null | undefined;
  /** DEFAULT_LANGUAGE; absent: English. */
  defaultLanguage?: Language | undefined;
  /** EMAIL_TEMPLATES_DIR's overrides (config.emailTemplates), asked first for each part; absent or null: the built-in email. */
  emailTemplates?: TemplateOverrides | null | undefined;
}

/**
 * Every email kind and the variables it offers a template (all strings, ready to print; the HTML
 * form escapes them). Every kind offers `appName`; `url` is the address its button opens.
 */
export const EMAIL_KINDS = {
  email_verification: ['appName', 'url', 'lifetime'],
  provider_linked: ['appName', 'url', 'providerName', 'providerLogin'],
  email_sign_in: ['appName', 'url', 'code', 'lifetime'],
  password_reset: ['appName', 'url', 'lifetime'],
  password_changed: ['appName', 'url', 'how', 'firstPassword'],
  account_locked: ['appName', 'url', 'failures', 'lockedFor'],
  email_change: ['appName', 'url', 'lifetime'],
  email_change_requested: ['appName', 'url', 'newEmail'],
  email_changed: ['appName', 'url', 'newEmail'],
  account_secured: ['appName', 'url'],
  organization_invitation: ['appName', 'url', 'organization', 'role', 'lifetime'],
} as const satisfies Partial<Record<EmailTemplate, readonly string[]>>;

export type EmailKind = keyof typeof EMAIL_KINDS;

/** The values one kind offers, by name. */
export type EmailVariables<K extends EmailKind> = Record<(typeof EMAIL_KINDS)[K][number], string>;

interface EmailContent {
  template: EmailKind;
  /** The values the kind offers an override (EMAIL_KINDS), as printed. */
  vars: Readonly<Record<string, string>>;
  subject: string;
  intro: string[];
  action: string;
  url: string;
  outro: string[];
}

function languageOf(options: EmailLanguage): Language {
  return options.language ?? options.defaultLanguage ?? 'en';
}

/** "1 hour" / "24 hours" in the email's language (plural forms by its rules). */
function hoursWords(t: Translate, hours: number): string {
  return t('email.hours', { count: hours });
}

/** "15 minutes" in the email's language, by the platform's own unit names (an override's `{{lifetime}}`, `{{lockedFor}}`). */
function minutesWords(lang: Language, minutes: number): string {
  return new Intl.NumberFormat(lang, { style: 'unit', unit: 'minute', unitDisplay: 'long' }).format(minutes);
}

function builtIn(lang: Language, content: EmailContent): RenderedEmail {
  const t = translator(lang);
  const hello = t('email.hello');
  const text = [hello, '', ...content.intro, content.url, '', ...content.outro].join('\n');
  const paragraphs = (lines: string[]): string => lines.map((line) => `<p>${escapeHtml(line)}</p>`).join('\n');
  const url = escapeHtml(content.url);
  const html = `<!doctype html>
<html lang="${lang}" dir="${directionOf(lang)}"><head><meta charset="utf-8"><title>${escapeHtml(content.subject)}</title></head>
<body style="font-family: system-ui, sans-serif; line-height: 1.5; color: #1a1a1a;">
<p>${escapeHtml(hello)}</p>
${paragraphs(content.intro)}
<p><a href="${url}" style="display: inline-block; padding: 10px 16px; background: #1d4ed8; color: #ffffff; border-radius: 6px; text-decoration: none;">${escapeHtml(content.action)}</a></p>
<p style="font-size: 0.9em;">${escapeHtml(t('email.copyLink'))}<br>${url}</p>
${paragraphs(content.outro)}
</body></html>
`;
  return { template: content.template, language: lang, subject: content.subject, text, html };
}

/**
 * The email in `lang`: each part (subject, text, HTML) from its override when EMAIL_TEMPLATES_DIR
 * has one for this kind and language, else the built-in one. The parts are independent: a team
 * may replace only the subject, or only the HTML.
 */
function render(lang: Language, content: EmailContent, options: EmailLanguage): RenderedEmail {
  const overrides = options.emailTemplates ?? null;
  const override = (part: 'subject' | 'text' | 'html'): string | null => overrides?.render(content.template, lang, part, content.vars) ?? null;
  const subject = override('subject') ?? content.subject;
  const email = builtIn(lang, { ...content, subject });
  return { ...email, text: override('text') ?? email.text, html: override('html') ?? email.html };
}

/** Shorthand: the catalog lookup of an email with its variables. */
function lookup(lang: Language, vars: MessageVars): (key: string, extra?: MessageVars) => string {
  const t = translator(lang);
  return (key, extra) => t(key, { ...vars, ...extra });
}

export function renderVerificationEmail(options: { appName: string; url: string; lifetimeHours: number } & EmailLanguage): RenderedEmail {
  const lang = languageOf(options);
  const t = lookup(lang, { appName: options.appName, lifetime: hoursWords(translator(lang), options.lifetimeHours) });
  const vars: EmailVariables<'email_verification'> = {
    appName: options.appName,
    url: options.url,
    lifetime: hoursWords(translator(lang), options.lifetimeHours),
  };
  return render(
    lang,
    {
      template: 'email_verification',
      vars,
      subject: t('email.verification.subject'),
      intro: [t('email.verification.intro')],
      action: t('email.verification.action'),
      url: options.url,
      outro: [t('email.linkOnce'), t('email.verification.notYou')],
    },
    options,
  );
}

/** A security notice (ASVS 5.0 6.3.7): a sign-in provider was linked to the account. No secret inside. */
export function renderProviderLinkedEmail(
  options: { appName: string; providerName: string; providerLogin: string; baseUrl: string } & EmailLanguage,
): RenderedEmail {
  const lang = languageOf(options);
  const t = lookup(lang, { appName: options.appName, providerName: options.providerName, providerLogin: options.providerLogin });
  const vars: EmailVariables<'provider_linked'> = {
    appName: options.appName,
    url: `${options.baseUrl}/forgot-password`,
    providerName: options.providerName,
    providerLogin: options.providerLogin,
  };
  return render(
    lang,
    {
      template: 'provider_linked',
      vars,
      subject: t('email.providerLinked.subject'),
      intro: [t('email.providerLinked.what'), t('email.othersSignedOut'), t('email.providerLinked.notYou')],
      action: t('email.chooseNewPassword'),
      url: `${options.baseUrl}/forgot-password`,
      outro: [t('email.providerLinked.wasYou')],
    },
    options,
  );
}

/** The link and the code carry the same sign-in: either works, once. The code is never in the subject (kept after the body is purged). */
export function renderEmailSignInEmail(options: { appName: string; url: string; code: string; lifetimeMinutes: number } & EmailLanguage): RenderedEmail {
  const lang = languageOf(options);
  const t = lookup(lang, { appName: options.appName, code: options.code, count: options.lifetimeMinutes });
  const vars: EmailVariables<'email_sign_in'> = {
    appName: options.appName,
    url: options.url,
    code: options.code,
    lifetime: minutesWords(lang, options.lifetimeMinutes),
  };
  return render(
    lang,
    {
      template: 'email_sign_in',
      vars,
      subject: t('email.signIn.subject'),
      intro: [t('email.signIn.intro'), t('email.signIn.openLink')],
      action: t('common.signIn'),
      url: options.url,
      outro: [t('email.signIn.code'), t('email.signIn.expires'), t('email.signIn.notYou')],
    },
    options,
  );
}

export function renderPasswordResetEmail(options: { appName: string; url: string; lifetimeHours: number } & EmailLanguage): RenderedEmail {
  const lang = languageOf(options);
  const t = lookup(lang, { appName: options.appName, lifetime: hoursWords(translator(lang), options.lifetimeHours) });
  const vars: EmailVariables<'password_reset'> = { appName: options.appName, url: options.url, lifetime: hoursWords(translator(lang), options.lifetimeHours) };
  return render(
    lang,
    {
      template: 'password_reset',
      vars,
      subject: t('email.passwordReset.subject'),
      intro: [t('email.passwordReset.intro'), t('email.passwordReset.openLink')],
      action: t('email.chooseNewPassword'),
      url: options.url,
      outro: [t('email.linkOnce'), t('email.passwordReset.notYou')],
    },
    options,
  );
}

/**
 * A security notice: the account's password was set or replaced through a reset link. For an
 * account that had none (provider sign-in only), a new way in was added: said in so many words.
 */
export function renderPasswordChangedEmail(
  options: { appName: string; baseUrl: string; how: 'reset' | 'change'; firstPassword: boolean } & EmailLanguage,
): RenderedEmail {
  const lang = languageOf(options);
  const t = lookup(lang, { appName: options.appName });
  const vars: EmailVariables<'password_changed'> = {
    appName: options.appName,
    url: `${options.baseUrl}/forgot-password`,
    how: options.how,
    firstPassword: String(options.firstPassword),
  };
  return render(
    lang,
    {
      template: 'password_changed',
      vars,
      subject: options.firstPassword ? t('email.passwordChanged.subjectFirst') : t('email.passwordChanged.subject'),
      intro: [
        options.firstPassword ? t('email.passwordChanged.whatFirst') : t('email.passwordChanged.what'),
        options.how === 'reset' ? t('email.passwordChanged.byReset') : t('email.passwordChanged.bySession'),
        t('email.othersSignedOut'),
      ],
      action: t('email.chooseNewPassword'),
      url: `${options.baseUrl}/forgot-password`,
      outro: [t('email.nothingToDo'), t('email.passwordChanged.notYou')],
    },
    options,
  );
}

/** A security notice: failed sign-ins locked the account for a while. Says what happened and that the password still holds. */
export function renderAccountLockedEmail(
  options: { appName: string; baseUrl: string; failures: number; lockedForMinutes: number } & EmailLanguage,
): RenderedEmail {
  const lang = languageOf(options);
  const t = lookup(lang, { appName: options.appName, failures: options.failures, count: options.lockedForMinutes });
  const vars: EmailVariables<'account_locked'> = {
    appName: options.appName,
    url: `${options.baseUrl}/forgot-password`,
    failures: String(options.failures),
    lockedFor: minutesWords(lang, options.lockedForMinutes),
  };
  return render(
    lang,
    {
      template: 'account_locked',
      vars,
      subject: t('email.accountLocked.subject'),
      intro: [t('email.accountLocked.what'), t('email.accountLocked.nobody')],
      action: t('email.chooseNewPassword'),
      url: `${options.baseUrl}/forgot-password`,
      outro: [t('email.accountLocked.wasYou'), t('email.accountLocked.notYou')],
    },
    options,
  );
}

/** The link that moves an account to a new address, sent to that address (in the account's language): following it proves control of it. */
export function renderEmailChangeEmail(options: { appName: string; url: string; lifetimeHours: number } & EmailLanguage): RenderedEmail {
  const lang = languageOf(options);
  const t = lookup(lang, { appName: options.appName, lifetime: hoursWords(translator(lang), options.lifetimeHours) });
  const vars: EmailVariables<'email_change'> = { appName: options.appName, url: options.url, lifetime: hoursWords(translator(lang), options.lifetimeHours) };
  return render(
    lang,
    {
      template: 'email_change',
      vars,
      subject: t('email.emailChange.subject'),
      intro: [t('email.emailChange.intro')],
      action: t('email.emailChange.action'),
      url: options.url,
      outro: [t('email.linkOnce'), t('email.emailChange.notYou')],
    },
    options,
  );
}

/** A security notice to the old address: a change away from it was asked for (it happens only if the new address confirms). */
export function renderEmailChangeRequestedEmail(options: { appName: string; newEmail: string; baseUrl: string } & EmailLanguage): RenderedEmail {
  const lang = languageOf(options);
  const t = lookup(lang, { appName: options.appName, newEmail: options.newEmail });
  const vars: EmailVariables<'email_change_requested'> = { appName: options.appName, url: `${options.baseUrl}/forgot-password`, newEmail: options.newEmail };
  return render(
    lang,
    {
      template: 'email_change_requested',
      vars,
      subject: t('email.emailChangeRequested.subject'),
      intro: [t('email.emailChangeRequested.what')],
      action: t('email.chooseNewPassword'),
      url: `${options.baseUrl}/forgot-password`,
      outro: [t('email.emailChangeRequested.wasYou'), t('email.emailChangeRequested.notYou')],
    },
    options,
  );
}

/** A security notice to the old address: the account now uses another one. */
export function renderEmailChangedEmail(options: { appName: string; newEmail: string; baseUrl: string } & EmailLanguage): RenderedEmail {
  const lang = languageOf(options);
  const t = lookup(lang, { appName: options.appName, newEmail: options.newEmail });
  const vars: EmailVariables<'email_changed'> = { appName: options.appName, url: `${options.baseUrl}/login`, newEmail: options.newEmail };
  return render(
    lang,
    {
      template: 'email_changed',
      vars,
      subject: t('email.emailChanged.subject'),
      intro: [t('email.emailChanged.what')],
      action: t('email.emailChanged.action'),
      url: `${options.baseUrl}/login`,
      outro: [t('email.nothingToDo'), t('email.emailChanged.notYou')],
    },
    options,
  );
}

/**
 * The first sign-in by a proof of the mailbox removed a password chosen before the address was
 * proved, with what was set up through it: the person learns why it is gone and how to choose one.
 */
export function renderAccountSecuredEmail(options: { appName: string; baseUrl: string } & EmailLanguage): RenderedEmail {
  const lang = languageOf(options);
  const t = lookup(lang, { appName: options.appName });
  const vars: EmailVariables<'account_secured'> = { appName: options.appName, url: `${options.baseUrl}/forgot-password` };
  return render(
    lang,
    {
      template: 'account_secured',
      vars,
      subject: t('email.accountSecured.subject'),
      intro: [t('email.accountSecured.what'), t('email.accountSecured.why'), t('email.accountSecured.choose')],
      action: t('email.chooseNewPassword'),
      url: `${options.baseUrl}/forgot-password`,
      outro: [t('email.accountSecured.wasYou')],
    },
    options,
  );
}

/** An invitation into an organization: the link opens a page that spends nothing until its button is pressed. */
export function renderOrganizationInvitationEmail(
  options: { appName: string; url: string; organization: string; role: string; lifetimeDays: number } & EmailLanguage,
): RenderedEmail {
  const lang = languageOf(options);
  const lifetime = new Intl.NumberFormat(lang, { style: 'unit', unit: 'day', unitDisplay: 'long' }).format(options.lifetimeDays);
  const t = lookup(lang, { appName: options.appName, organization: options.organization, role: options.role, lifetime });
  const vars: EmailVariables<'organization_invitation'> = {
    appName: options.appName,
    url: options.url,
    organization: options.organization,
    role: options.role,
    lifetime,
  };
  return render(
    lang,
    {
      template: 'organization_invitation',
      vars,
      subject: t('email.orgInvitation.subject'),
      intro: [t('email.orgInvitation.intro'), t('email.orgInvitation.openLink')],
      action: t('email.orgInvitation.accept'),
      url: options.url,
      outro: [t('email.orgInvitation.expires'), t('email.orgInvitation.notYou')],
    },
    options,
  );
}
