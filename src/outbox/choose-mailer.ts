/** @module Which sender delivers the queued emails, from the configuration. */
import type { Config } from '../config.js';
import type { Logger } from '../logger.js';
import { createConsoleMailer } from './console-mailer.js';
import type { Mailer } from './outbox.js';
import { createSmtpMailer } from './smtp-mailer.js';

/**
 * SMTP when SMTP_URL is set; otherwise the console while development conveniences are on
 * (outside production, with a loopback BASE_URL: config.ts), and else no sender at all: emails
 * stay queued (SPEC §1), their links never printed where someone other than the developer at
 * the machine may read them. With MAIL_DELIVERY=worker only `gatehouse mail` sends, and the
 * server just queues.
 */
export function chooseMailer(config: Readonly<Config>, logger: Logger): Mailer | null {
  if (config.mail.delivery === 'worker') return null;
  if (config.mail.smtpUrl !== null) return createSmtpMailer({ url: config.mail.smtpUrl, from: config.mail.from, tls: config.mail.smtpTls });
  if (config.devConveniences) return createConsoleMailer();
  if (config.mode === 'production') {
    logger.warn('No email sender is configured (SMTP_URL): emails stay queued in email_outbox until one is.');
  } else {
    logger.warn(
      { baseUrl: config.baseUrl },
      'No email sender is configured (SMTP_URL), and BASE_URL is not localhost, 127.0.0.1 or [::1]: emails are not printed to the console; they stay queued in email_outbox until SMTP_URL is set.',
    );
  }
  return null;
}
