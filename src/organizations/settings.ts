/**
 * @module The organizations' settings: the operator's own roles (ORG_ROLES_FILE) and the limits on
 * creating organizations and invitations and on accepting them.
 *
 * The roles file is read here, once, while the configuration loads (as the brand's files are): a
 * missing or malformed file is listed with every other bad variable, before anything opens, and
 * `gatehouse doctor` reports it too. Only `node:fs` and src/settings.ts are imported, so the loader
 * imports every settings module without a cycle.
 */
import { readFileSync } from 'node:fs';
import { defineSettings, type SettingsReader } from '../settings.js';

/** The roles every organization has: Gatehouse's own management rights hang on them. */
export const BUILT_IN_ROLES = ['owner', 'admin', 'member'] as const;
export type BuiltInRole = (typeof BUILT_IN_ROLES)[number];

/** A role's name: what apps compare, so plain and short. */
export const ROLE_NAME = /^[a-z][a-z0-9_-]{0,63}$/;
/** A permission string: what apps check (`invoices:read`, `billing.*`, `docs/write`). */
const PERMISSION = /^[A-Za-z0-9:._*/-]{1,128}$/;
const MAX_ROLES = 100;
const MAX_PERMISSIONS = 200;
const MAX_ROLES_FILE_BYTES = 256 * 1024;

export interface OrganizationSettings {
  /** Every role an organization member may have, each with its permission strings (`[]` for the built-in ones). */
  organizationRoles: ReadonlyMap<string, readonly string[]>;
}

export const organizationSettings = defineSettings({
  name: 'organizations',
  variables: [
    {
      name: 'ORG_ROLES_FILE',
      default: '',
      meaning: 'a JSON file of your own organization roles besides owner, admin and member: {"billing": ["invoices:read"]} (unset: none)',
    },
  ],
  rateLimits: {
    orgCreate: { name: 'RATE_LIMIT_ORG_CREATE', default: '10/1h', meaning: 'organizations created per user' },
    orgInvitation: {
      name: 'RATE_LIMIT_ORG_INVITATION',
      default: '50/1h',
      meaning: 'invitations sent per organization and, separately, per inviting user (each one is an email)',
    },
    orgInvitationAccept: {
      name: 'RATE_LIMIT_ORG_INVITATION_ACCEPT',
      default: '10/15m',
      meaning: 'invitation acceptances (a guessed token is refused) per client IP and, separately, per user',
    },
  },
  read: (reader): OrganizationSettings => {
    const roles = new Map<string, readonly string[]>(BUILT_IN_ROLES.map((role) => [role, Object.freeze([])]));
    const file = reader.read('ORG_ROLES_FILE');
    if (file !== undefined) for (const [role, permissions] of readRolesFile(file, reader)) roles.set(role, permissions);
    return { organizationRoles: roles };
  },
});

/** The file's roles; each problem is recorded with the variable's name, and the roles read so far are kept. */
function readRolesFile(file: string, reader: SettingsReader<'ORG_ROLES_FILE'>): Map<string, readonly string[]> {
  const roles = new Map<string, readonly string[]>();
  const problem = (what: string): Map<string, readonly string[]> => {
    reader.problem(`ORG_ROLES_FILE: ${file}: ${what}`);
    return roles;
  };
  let parsed: unknown;
  try {
    const bytes = readFileSync(file);
    if (bytes.length > MAX_ROLES_FILE_BYTES) return problem(`is larger than ${MAX_ROLES_FILE_BYTES / 1024} KiB`);
    parsed = JSON.parse(bytes.toString('utf8'));
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (code === 'ENOENT') return problem('no such file');
    if (typeof code === 'string') return problem(`cannot be read (${code})`);
    return problem(`is not valid JSON (${(error as Error).message})`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return problem('expected a JSON object of role → list of permission strings');
  const entries = Object.entries(parsed);
  if (entries.length > MAX_ROLES) return problem(`has ${entries.length} roles; at most ${MAX_ROLES}`);
  for (const [role, permissions] of entries) {
    if ((BUILT_IN_ROLES as readonly string[]).includes(role)) return problem(`"${role}" is a built-in role and cannot be redefined`);
    if (!ROLE_NAME.test(role)) return problem(`role "${role}" must be 1 to 64 lower-case letters, digits, "_" or "-", starting with a letter`);
    if (!Array.isArray(permissions)) return problem(`role "${role}": expected a list of permission strings`);
    if (permissions.length > MAX_PERMISSIONS) return problem(`role "${role}" has more than ${MAX_PERMISSIONS} permissions`);
    const bad = (permissions as unknown[]).find((permission) => typeof permission !== 'string' || !PERMISSION.test(permission));
    if (bad !== undefined) return problem(`role "${role}": ${JSON.stringify(bad)} is not a permission string (1 to 128 of A-Z a-z 0-9 : . _ * / -)`);
    roles.set(role, Object.freeze([...new Set(permissions as string[])]));
  }
  return roles;
}
