/**
 * @module The setting of email template overrides: the folder of `<kind>.<lang>.txt`,
 * `<kind>.<lang>.html` and `<kind>.<lang>.subject.txt` files that replace the built-in emails.
 *
 * The files are read and checked here, while the configuration loads (as the brand's files are:
 * brand/settings.ts says why): an unknown placeholder or a misnamed file is listed, naming the
 * file and the placeholder, with every other bad variable, before the database or any thread is
 * opened, and `gatehouse doctor` and `gatehouse mail preview` see the same. Every email render
 * asks `emailTemplates` first (outbox/templates.ts).
 */
import { ConfigError } from '../config-error.js';
import { SUPPORTED_LANGUAGES } from '../i18n/languages.js';
import { defineSettings, type SettingsReader } from '../settings.js';
import { loadTemplateOverrides, type TemplateOverrides } from './template-overrides.js';
import { EMAIL_KINDS } from './templates.js';

export interface EmailTemplateSettings {
  /** The folder of overrides, as given (relative to the working directory); null: the built-in emails only. */
  emailTemplatesDir: string | null;
  /** The overrides read from it, checked; null: none configured. */
  emailTemplates: TemplateOverrides | null;
}

function readOverrides(reader: Pick<SettingsReader<never>, 'problem'>, dir: string): TemplateOverrides | null {
  try {
    return loadTemplateOverrides(dir, EMAIL_KINDS, SUPPORTED_LANGUAGES);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    for (const problem of error.problems) reader.problem(problem);
    return null;
  }
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
  read: (reader): EmailTemplateSettings => {
    const dir = reader.read('EMAIL_TEMPLATES_DIR') ?? null;
    return { emailTemplatesDir: dir, emailTemplates: dir === null ? null : readOverrides(reader, dir) };
  },
});
