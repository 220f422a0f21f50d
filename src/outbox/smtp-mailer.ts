/** @module Delivers emails over SMTP (nodemailer) to the server named by SMTP_URL. */
import { requireOptional } from '../lazy-require.js';
import type { Mailer } from './outbox.js';

// Bounded waits: a hanging SMTP server fails the attempt (retried later) instead of stalling.
const TIMEOUT_MS = 15_000;

export function createSmtpMailer(options: { url: string; from: string }): Mailer {
  const nodemailer = requireOptional('nodemailer') as typeof import('nodemailer');
  const transport = nodemailer.createTransport(options.url, {
    connectionTimeout: TIMEOUT_MS,
    greetingTimeout: TIMEOUT_MS,
    socketTimeout: TIMEOUT_MS,
    // never log message bodies: they carry links with tokens
    logger: false,
    debug: false,
  } as never);
  return {
    async send(email) {
      await transport.sendMail({
        from: options.from,
        to: email.to,
        subject: email.subject,
        text: email.text,
        ...(email.html !== null ? { html: email.html } : {}),
      });
    },
    async close() {
      transport.close();
    },
  };
}
