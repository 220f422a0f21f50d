/**
 * @module The setting of email template overrides: the folder of `<kind>.<lang>.txt`,
 * `<kind>.<lang>.html` and `<kind>.<lang>.subject.txt` files that replace the built-in emails
 * (outbox/template-overrides.ts reads and checks them against the kinds and languages).
 */
import { defineSettings } from '../settings.js';

export interface EmailTemplateSettings {
  /** The folder of overrides, as given (relative to the working directory); null: the built-in emails only. */
  emailTemplatesDir: string | null;
}

export const emailTemplateSettings = defineSettings({
  name: 'email-templates',
  variables: [
    {
      name: 'EMAIL_TEMPLATES_DIR',
      default: '',
      meaning: 'a folder of <kind>.<lang>.txt, .html and .subject.txt files with {{placeholders}} that replace built-in emails (unset: none)',
    },
  ],
  read: (reader): EmailTemplateSettings => ({ emailTemplatesDir: reader.read('EMAIL_TEMPLATES_DIR') ?? null }),
});
