/**
 * @module The default sender outside production while BASE_URL is a loopback address
 * (`config.devConveniences`): prints each email (its text), link and code included, so a
 * developer can finish every flow without an email server. Never used in production, nor with
 * any other BASE_URL, where whoever reads the console or its log collector need not be the
 * developer at that machine: there emails wait for SMTP_URL (gatehouse.ts, chooseMailer).
 */
import type { Mailer } from './outbox.js';

export function createConsoleMailer(write: (text: string) => void = (text) => process.stdout.write(text)): Mailer {
  return {
    async send(email) {
      write(`\n--- email to ${email.to} ---\nSubject: ${email.subject}\n\n${email.text}\n--- end of email ---\n\n`);
    },
  };
}
