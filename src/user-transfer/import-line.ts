/**
 * @module One line of an import file, read into what the import stores, or the reason it is
 * refused. The format: `{ email, emailVerified?, createdAt?, externalId?, disabled?, password?:
 * { algorithm, hash, … }, providers?: [{ provider, providerUserId, login? }] }`; other fields are
 * ignored. A password hash is encoded as given (credentials/imported-hashes.ts), never hashed again.
 */
import { z } from 'zod';
import { encodeImportedPassword } from '../credentials/imported-hashes.js';
import { emailSchema } from '../credentials/rules.js';
import type { ProviderLink } from './store.js';

/** A line longer than this is refused unread: no user needs 64 KiB. */
export const MAX_LINE_CHARS = 64 * 1024;
/** Provider ids are short lower-case names (config.ts checks OIDC_PROVIDERS the same way). */
const PROVIDER_ID = /^[a-z][a-z0-9_]{0,31}$/;

const providerSchema = z.object({
  provider: z.string().regex(PROVIDER_ID, 'must be a provider id such as "github"'),
  providerUserId: z.string().min(1, 'is required').max(255),
  login: z.string().max(255).optional(),
});

const lineSchema = z.object({
  // null only for a user who signs in through a provider alone (as the export writes one).
  email: emailSchema.nullable(),
  emailVerified: z.boolean().optional(),
  createdAt: z.iso.datetime({ offset: true, message: 'must be an ISO 8601 date and time' }).optional(),
  externalId: z.string().min(1).max(255).nullable().optional(),
  disabled: z.boolean().optional(),
  password: z.unknown().optional(),
  providers: z.array(providerSchema).max(50).optional(),
});

/** What one line asks for. */
export interface ImportRecord {
  email: string | null;
  emailVerified: boolean | undefined;
  createdAt: Date | undefined;
  externalId: string | undefined;
  disabled: boolean | undefined;
  /** Encoded for the password column; undefined: the line names no password. */
  passwordHash: string | undefined;
  providers: ProviderLink[];
}

export type ParsedLine = { ok: true; record: ImportRecord } | { ok: false; error: string };

function refuse(error: string): ParsedLine {
  return { ok: false, error };
}

export function parseImportLine(text: string): ParsedLine {
  if (text.length > MAX_LINE_CHARS) return refuse(`the line is longer than ${MAX_LINE_CHARS} characters`);
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return refuse('not valid JSON');
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json)) return refuse('expected a JSON object');
  if (!('email' in json)) return refuse('email: is required');
  const parsed = lineSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return refuse(`${issue?.path.join('.') || 'line'}: ${issue?.message ?? 'is not valid'}`);
  }
  const line = parsed.data;
  const providers = (line.providers ?? []).map((p) => ({ provider: p.provider, providerUserId: p.providerUserId, login: p.login ?? '' }));
  if (line.email === null && providers.length === 0) return refuse('email: is required (null only with a provider sign-in)');
  let passwordHash: string | undefined;
  if (line.password !== undefined && line.password !== null) {
    const encoded = encodeImportedPassword(line.password);
    if (!encoded.ok) return refuse(`password: ${encoded.error}`);
    passwordHash = encoded.passwordHash;
  }
  return {
    ok: true,
    record: {
      email: line.email,
      emailVerified: line.emailVerified,
      createdAt: line.createdAt === undefined ? undefined : new Date(line.createdAt),
      externalId: line.externalId ?? undefined,
      disabled: line.disabled,
      passwordHash,
      providers,
    },
  };
}
