/**
 * @module The default sender outside production: prints each email (its text), link included,
 * so a developer can finish every flow without an email server. Never used in production, where
 * nothing secret is printed: there emails wait for SMTP_URL.
 */
import type { Mailer } from './outbox.js';

export function createConsoleMailer(write: (text: string) => void = (text) => process.stdout.write(text)): Mailer {
  return {
    async send(email) {
      write(`\n--- email to ${email.to} ---\nSubject: ${email.subject}\n\n${email.text}\n--- end of email ---\n\n`);
    },
  };
}
