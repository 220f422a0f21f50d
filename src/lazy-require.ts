/**
 * @module Loads a module only when it is needed. The PostgreSQL, Redis and SMTP clients weigh
 * about 40 MB of memory together, and the embedded default (SQLite, in-memory limits, console
 * email) uses none of them; pino-pretty is for a terminal only, and the common-password list for
 * the first new password. All are CommonJS, so a synchronous require works.
 */
import { createRequire } from 'node:module';

export const requireOptional = createRequire(import.meta.url);
