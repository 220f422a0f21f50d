/**
 * @module Taking data out: every user as one NDJSON line in the import format (so an export
 * imports into another Gatehouse unchanged), and a person's own data as one JSON document.
 * Neither ever holds a provider token, a session token or a secret; the export holds password
 * hashes only when asked, each under its own algorithm name (exportPasswordHash).
 */
import { recordAudit } from '../audit/record.js';
import type { AuditStore } from '../audit/audit-log.js';
import { exportPasswordHash } from '../credentials/imported-hashes.js';
import type { RateLimits } from '../limits/rate-limits.js';
import type { RequestContext } from '../request-context.js';
import type { User } from '../users/user.js';
import type { OrganizationStore } from '../organizations/store.js';
import type { ExportedUserRow, TransferStore } from './store.js';

/** Users read per query while exporting: memory stays flat however many there are. */
const EXPORT_PAGE = 500;

function exportLine(row: ExportedUserRow, includePasswordHashes: boolean): Record<string, unknown> {
  return {
    email: row.email,
    emailVerified: row.emailVerified,
    createdAt: row.createdAt.toISOString(),
    ...(row.externalId !== null ? { externalId: row.externalId } : {}),
    disabled: row.disabledAt !== null,
    ...(includePasswordHashes && row.passwordHash !== null ? { password: exportPasswordHash(row.passwordHash) } : {}),
    ...(row.providers.length > 0
      ? { providers: row.providers.map((link) => ({ provider: link.provider, providerUserId: link.providerUserId, login: link.login })) }
      : {}),
  };
}

/** Every user, oldest id first, one NDJSON line (with its newline) at a time. */
export async function* exportUsers(store: TransferStore, options: { includePasswordHashes: boolean }): AsyncGenerator<string> {
  let afterId: string | null = null;
  for (;;) {
    const page = await store.exportPage(afterId, EXPORT_PAGE);
    for (const row of page) yield `${JSON.stringify(exportLine(row, options.includePasswordHashes))}\n`;
    if (page.length < EXPORT_PAGE) return;
    afterId = page[page.length - 1]?.id ?? null;
  }
}

export interface AccountExportDeps {
  store: TransferStore;
  organizations: Pick<OrganizationStore, 'listMemberships'>;
  audit: AuditStore;
  limits: RateLimits;
}

/**
 * What Gatehouse holds about the signed-in person (their right of access and to portability):
 * the account, sessions, linked sign-ins, passkeys, two-factor state, organizations and their audit events.
 * Counted against RATE_LIMIT_ACCOUNT_EXPORT per user, and audited (`account_exported`).
 */
export async function exportAccount(deps: AccountExportDeps, user: User, ctx: RequestContext): Promise<Record<string, unknown>> {
  await deps.limits.consume('accountExport', { userId: user.id }, ctx.now);
  const data = await deps.store.ownData(user.id, ctx.now);
  const memberships = await deps.organizations.listMemberships(user.id);
  await recordAudit(deps.audit, ctx, 'account_exported', user.id, {});
  const iso = (date: Date | null): string | null => date?.toISOString() ?? null;
  return {
    exportedAt: ctx.now.toISOString(),
    account: {
      id: user.id,
      email: user.email,
      emailVerified: user.emailVerified,
      hasPassword: user.passwordHash !== null,
      createdAt: user.createdAt.toISOString(),
      lastLoginAt: iso(user.lastLoginAt),
      disabledAt: iso(user.disabledAt),
    },
    sessions: data.sessions.map((s) => ({
      id: s.id,
      createdAt: s.createdAt.toISOString(),
      expiresAt: s.expiresAt.toISOString(),
      lastSeenAt: iso(s.lastSeenAt),
      ip: s.ip,
      userAgent: s.userAgent,
      methods: s.methods === '' ? [] : s.methods.split(','),
    })),
    linkedSignIns: data.linkedSignIns.map((l) => ({ provider: l.provider, login: l.login, linkedAt: l.linkedAt.toISOString() })),
    passkeys: data.passkeys.map((p) => ({ name: p.name, createdAt: p.createdAt.toISOString(), lastUsedAt: iso(p.lastUsedAt) })),
    twoFactor: { enabled: data.twoFactor.enabled, enabledAt: iso(data.twoFactor.enabledAt), recoveryCodesLeft: data.twoFactor.recoveryCodesLeft },
    organizations: memberships.map((m) => ({
      id: m.organization.id,
      name: m.organization.name,
      slug: m.organization.slug,
      role: m.role,
      joinedAt: m.joinedAt.toISOString(),
    })),
    auditEvents: data.auditEvents.map((e) => ({ type: e.type, at: e.at.toISOString(), ip: e.ip, userAgent: e.userAgent, metadata: e.metadata })),
  };
}
