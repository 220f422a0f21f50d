/**
 * @module The error a bad configuration stops the start with, every problem listed. Its own
 * module so that a settings module which reads files at load (email template overrides) can
 * report through it without importing the loader that imports it (src/config.ts re-exports it).
 */
export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}
