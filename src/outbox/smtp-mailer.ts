/** @module Delivers emails over SMTP (nodemailer) to the server named by SMTP_URL. */
import { requireOptional } from '../lazy-require.js';
import type { Mailer } from './outbox.js';

// Bounded waits: a hanging SMTP server fails the attempt (retried later) instead of stalling.
const TIMEOUT_MS = 15_000;

export function createSmtpMailer(options: { url: string; from: string; tls: 'required' | 'off' }): Mailer & { verify(): Promise<void> } {
  const nodemailer = requireOptional('nodemailer') as typeof import('nodemailer');
  const plainUrl = options.url.startsWith('smtp://');
  // One options object with the URL inside: given as a second argument, these settings would be
  // taken as message defaults and silently ignored (as the time bounds once were).
  const transport = nodemailer.createTransport({
    url: options.url,
    // Emails carry sign-in, reset and verification links. An smtp:// server must upgrade with
    // STARTTLS, or nothing is sent: a man in the middle who strips STARTTLS from the server's
    // greeting would otherwise read every link. SMTP_TLS=off is an explicit choice (a relay on
    // loopback); then no TLS is attempted at all.
    ...(plainUrl && options.tls === 'required' ? { requireTLS: true } : {}),
    ...(plainUrl && options.tls === 'off' ? { ignoreTLS: true } : {}),
    // Certificate checks are never relaxed: the name and the chain must verify.
    tls: { rejectUnauthorized: true, minVersion: 'TLSv1.2' },
    connectionTimeout: TIMEOUT_MS,
    greetingTimeout: TIMEOUT_MS,
    socketTimeout: TIMEOUT_MS,
    // never log message bodies: they carry links with tokens
    logger: false,
    debug: false,
  });
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
    /** Connects, upgrades as SMTP_TLS requires, signs in, and hangs up (`gatehouse doctor`). */
    async verify() {
      await transport.verify();
    },
    async close() {
      transport.close();
    },
  };
}
