/**
 * @module Loads a driver only when the configuration needs it. The PostgreSQL, Redis and SMTP
 * clients weigh about 40 MB of memory together; the embedded default (SQLite, in-memory limits,
 * console email) uses none of them. All three are CommonJS, so a synchronous require works.
 */
import { createRequire } from 'node:module';

export const requireOptional = createRequire(import.meta.url);
