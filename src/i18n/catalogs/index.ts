/** @module Every language's catalog, by language code. */
import type { Language } from '../languages.js';
import { ar } from './ar.js';
import { de } from './de.js';
import { en } from './en.js';
import { es } from './es.js';
import { fr } from './fr.js';
import { ja } from './ja.js';

/** A catalog: flat keys (`login.title`, `account.sessions_one`) to messages with `{{name}}` slots. */
export type Catalog = Readonly<Record<string, string>>;

export const CATALOGS: Readonly<Record<Language, Catalog>> = { en, de, fr, es, ja, ar };
