/** @module The outbox's settings: how queued emails are delivered, from whom, and the cap on security notices. */
import { defineSettings } from '../settings.js';

export interface MailConfig {
  /** smtp:// or smtps:// URL of the server that delivers queued emails; null: none configured. */
  smtpUrl: string | null;
  /**
   * 'required': an smtp:// server must upgrade with STARTTLS and present a certificate that
   * verifies, or nothing is sent (no downgrade to plain text). 'off': plain SMTP, chosen
   * explicitly (a relay on loopback). smtps:// is TLS from the first byte either way.
   */
  smtpTls: 'required' | 'off';
  from: string;
  appName: string;
  /** Attempts before a queued email is marked dead. */
  maxAttempts: number;
  /** 'server': each server process sends; 'worker': only `gatehouse mail` does. */
  delivery: 'server' | 'worker';
}

export interface MailSettings {
  mail: Readonly<MailConfig>;
}

export const mailSettings = defineSettings({
  name: 'outbox',
  variables: [
    { name: 'APP_NAME', default: 'Gatehouse', meaning: 'product name in email subjects and bodies' },
    {
      name: 'SMTP_URL',
      default: '',
      meaning:
        'smtp://user:password@host:587 or smtps://…:465 that delivers emails (unset: printed to the console outside production with a localhost, 127.0.0.1 or [::1] BASE_URL, else kept queued)',
    },
    {
      name: 'SMTP_TLS',
      default: 'required',
      meaning: 'required: smtp:// must upgrade with STARTTLS to a verified certificate, or nothing is sent; off: plain SMTP (a relay on loopback)',
    },
    { name: 'MAIL_FROM', default: '', meaning: 'sender address of emails (unset: "<APP_NAME>" <no-reply@<BASE_URL host>>)' },
    { name: 'MAIL_MAX_ATTEMPTS', default: '5', meaning: 'attempts before a queued email is marked dead (1 to 100)' },
    { name: 'MAIL_DELIVERY', default: 'server', meaning: 'server: every server process sends emails; worker: only `gatehouse mail` processes send them' },
  ],
  rateLimits: {
    // Notices can be set off by someone else (wrong passwords lock an account): a day's cap keeps
    // them from flooding the owner's mailbox, and leaves room for every real event of a day.
    securityNotice: {
      name: 'RATE_LIMIT_SECURITY_NOTICE',
      default: '10/24h',
      meaning: 'security notice emails (account locked, password changed, provider linked) per user; past it a notice is dropped, not queued',
    },
  },
  read: (reader, { baseUrl }): MailSettings => {
    const appName = reader.read('APP_NAME') ?? 'Gatehouse';
    if (/[\r\n<>"]/.test(appName) || appName.length > 60)
      reader.problem('APP_NAME: expected a plain name of at most 60 characters, without quotes, angle brackets or line breaks');
    const smtpUrl = reader.read('SMTP_URL') ?? null;
    if (smtpUrl !== null && !/^smtps?:\/\/[^\s]+$/.test(smtpUrl)) {
      reader.problem('SMTP_URL: expected smtp://user:password@host:587 or smtps://user:password@host:465');
    } else if (smtpUrl !== null && smtpUrl.includes('?')) {
      // nodemailer lets URL parameters override its options (ignoreTLS, tls.rejectUnauthorized):
      // the TLS guarantees of SMTP_TLS must not be undone from inside the URL.
      reader.problem('SMTP_URL: expected no query parameters (?…): TLS is set by SMTP_TLS, and nothing else is read from the URL');
    }
    const rawSmtpTls = reader.read('SMTP_TLS') ?? 'required';
    if (rawSmtpTls !== 'required' && rawSmtpTls !== 'off') reader.problem(`SMTP_TLS: expected required or off, got "${rawSmtpTls}"`);
    const smtpTls = rawSmtpTls === 'off' ? 'off' : 'required';
    const from = reader.read('MAIL_FROM') ?? `"${appName}" <no-reply@${new URL(baseUrl).hostname}>`;
    if (/[\r\n]/.test(from) || !/@/.test(from)) reader.problem('MAIL_FROM: expected an address such as "Acme" <no-reply@acme.example>');
    const maxAttempts = reader.integer('MAIL_MAX_ATTEMPTS', 5, 1, 100);
    const rawDelivery = reader.read('MAIL_DELIVERY') ?? 'server';
    if (rawDelivery !== 'server' && rawDelivery !== 'worker') reader.problem(`MAIL_DELIVERY: expected server or worker, got "${rawDelivery}"`);
    const delivery = rawDelivery === 'worker' ? 'worker' : 'server';
    return { mail: Object.freeze({ smtpUrl, smtpTls, from, appName, maxAttempts, delivery }) };
  },
});
