/**
 * @module User import: reads NDJSON lines, checks each, and stores them in batches, one
 * transaction per batch (a crash loses at most the batch in flight, and running the import again
 * resumes: what was stored is found and skipped). A line that is refused never stops the file.
 *
 * Users already there are found by email, then by external id (then, for a user without an
 * email, by a provider link): `skip` leaves them, `update` sets what the line gives, `fail`
 * refuses the line.
 */
import { randomUUID } from 'node:crypto';
import type { AuditStore } from '../audit/audit-log.js';
import { reportSessionsRevoked } from '../session/flow.js';
import { emitEvent } from '../webhooks/events.js';
import { parseImportLine, type ImportRecord, type ParsedLine } from './import-line.js';
import type { ExistingUser, ImportedUserUpdate, NewImportedUser, NewProviderLink, ProviderLink, TransferStore } from './store.js';

export type OnConflict = 'skip' | 'update' | 'fail';
export const ON_CONFLICT: readonly OnConflict[] = ['skip', 'update', 'fail'];
/** Lines per transaction: large enough that a transaction's cost is shared, small enough to hold little. */
export const IMPORT_BATCH_LINES = 500;

export interface ImportOptions {
  dryRun: boolean;
  onConflict: OnConflict;
  now: Date;
}

export type LineStatus = 'imported' | 'updated' | 'skipped' | 'failed';

/** One input line's outcome (`--report` writes one per line). */
export interface LineResult {
  line: number;
  status: LineStatus;
  email?: string | null;
  error?: string;
}

export interface ImportSummary {
  imported: number;
  updated: number;
  skipped: number;
  failed: number;
}

export interface ImportDeps {
  store: TransferStore;
  audit: AuditStore;
}

/** Who ran the import, for its audit row. */
export interface ImportActor {
  actor: 'cli' | 'admin';
  ip: string | null;
  userAgent: string | null;
}

interface Pending {
  line: number;
  parsed: ParsedLine;
}

const linkKey = (link: ProviderLink): string => `${link.provider}\u0000${link.providerUserId}`;

/** What one batch will write, and each line's outcome. */
interface BatchPlan {
  users: NewImportedUser[];
  updates: { userId: string; update: ImportedUserUpdate; disables: boolean; enables: boolean; previousEmail: string | null }[];
  links: NewProviderLink[];
  results: LineResult[];
}

/** Decides each line of a batch against the users already there (and the earlier lines of the batch). */
async function planBatch(store: TransferStore, batch: readonly Pending[], options: ImportOptions): Promise<BatchPlan> {
  const records = batch.flatMap((item) => (item.parsed.ok ? [item.parsed.record] : []));
  const [existing, owners] = await Promise.all([
    store.findUsers(
      records.flatMap((r) => (r.email === null ? [] : [r.email])),
      records.flatMap((r) => (r.externalId === undefined ? [] : [r.externalId])),
    ),
    store.findLinkOwners(records.flatMap((r) => r.providers)),
  ]);
  const byEmail = new Map<string, ExistingUser>();
  const byExternalId = new Map<string, ExistingUser>();
  const byId = new Map<string, ExistingUser>();
  const remember = (user: ExistingUser): void => {
    if (user.email !== null) byEmail.set(user.email, user);
    if (user.externalId !== null) byExternalId.set(user.externalId, user);
    byId.set(user.id, user);
  };
  existing.forEach(remember);
  const linkOwner = new Map(owners.map((owner) => [linkKey(owner), owner.userId]));
  const plan: BatchPlan = { users: [], updates: [], links: [], results: [] };
  for (const { line, parsed } of batch) {
    if (!parsed.ok) {
      plan.results.push({ line, status: 'failed', error: parsed.error });
      continue;
    }
    const record = parsed.record;
    const result = decideLine(record, options, { byEmail, byExternalId, byId, linkOwner });
    plan.results.push({ line, email: record.email, ...result.outcome });
    if (result.outcome.status === 'failed' || result.outcome.status === 'skipped') continue;
    const userId = result.user?.id ?? randomUUID();
    if (result.user === undefined) {
      const user: NewImportedUser = {
        id: userId,
        email: record.email,
        emailVerified: record.emailVerified ?? false,
        passwordHash: record.passwordHash ?? null,
        createdAt: record.createdAt ?? options.now,
        externalId: record.externalId ?? null,
        disabledAt: record.disabled === true ? options.now : null,
      };
      plan.users.push(user);
      remember({ id: userId, email: user.email, externalId: user.externalId, disabledAt: user.disabledAt });
    } else {
      const { update, disables, enables } = updateOf(record, result.user, options.now);
      plan.updates.push({ userId, update, disables, enables, previousEmail: result.user.email });
      remember({ ...result.user, email: update.email ?? result.user.email, externalId: update.externalId ?? result.user.externalId });
    }
    for (const link of result.newLinks) {
      linkOwner.set(linkKey(link), userId);
      plan.links.push({ ...link, id: randomUUID(), userId, createdAt: options.now });
    }
  }
  return plan;
}

interface Known {
  byEmail: Map<string, ExistingUser>;
  byExternalId: Map<string, ExistingUser>;
  byId: Map<string, ExistingUser>;
  linkOwner: Map<string, string>;
}

function decideLine(
  record: ImportRecord,
  options: ImportOptions,
  known: Known,
): { outcome: Pick<LineResult, 'status' | 'error'>; user?: ExistingUser; newLinks: ProviderLink[] } {
  const refuse = (error: string) => ({ outcome: { status: 'failed' as const, error }, newLinks: [] });
  const byExternal = record.externalId === undefined ? undefined : known.byExternalId.get(record.externalId);
  const byLink = record.providers.map((link) => known.linkOwner.get(linkKey(link))).find((id) => id !== undefined);
  const user =
    (record.email === null ? undefined : known.byEmail.get(record.email)) ?? byExternal ?? (byLink === undefined ? undefined : known.byId.get(byLink));
  if (user !== undefined && byExternal !== undefined && byExternal.id !== user.id) return refuse('externalId: belongs to another user');
  const newLinks: ProviderLink[] = [];
  for (const link of record.providers) {
    const owner = known.linkOwner.get(linkKey(link));
    if (owner === undefined) newLinks.push(link);
    else if (owner !== user?.id) return refuse(`providers: the ${link.provider} account ${link.providerUserId} is linked to another user`);
  }
  if (user === undefined) return { outcome: { status: 'imported' }, newLinks };
  if (options.onConflict === 'skip') return { outcome: { status: 'skipped' }, user, newLinks: [] };
  if (options.onConflict === 'fail')
    return refuse(
      record.email !== null && known.byEmail.has(record.email)
        ? 'email: a user with this email exists'
        : 'a user with this externalId or provider sign-in exists',
    );
  return { outcome: { status: 'updated' }, user, newLinks };
}

function updateOf(record: ImportRecord, user: ExistingUser, now: Date): { update: ImportedUserUpdate; disables: boolean; enables: boolean } {
  const update: ImportedUserUpdate = {};
  if (record.email !== null && record.email !== user.email) update.email = record.email;
  if (record.emailVerified !== undefined) update.emailVerified = record.emailVerified;
  if (record.passwordHash !== undefined) update.passwordHash = record.passwordHash;
  if (record.createdAt !== undefined) update.createdAt = record.createdAt;
  if (record.externalId !== undefined) update.externalId = record.externalId;
  const disables = record.disabled === true && user.disabledAt === null;
  if (disables) update.disabledAt = now;
  if (record.disabled === false) update.disabledAt = null;
  return { update, disables, enables: record.disabled === false && user.disabledAt !== null };
}

/** What the events of a batch say: when, and who ran the import (`user.disabled` / `user.enabled`'s `actor`). */
interface BatchReport {
  now: Date;
  actor: ImportActor['actor'];
}

/**
 * Writes the plan and reports each change in the batch's transaction (webhooks/events.ts): one
 * `user.created` per user created; for a user updated, a changed address, a disable (with the
 * sessions it ends) or an enable, and provider sign-ins linked to it.
 */
async function writePlan(store: TransferStore, plan: BatchPlan, report: BatchReport): Promise<void> {
  const { now, actor } = report;
  await store.insertUsers(plan.users);
  for (const user of plan.users) await emitEvent(store, now, 'user.created', user, { method: 'import', emailVerified: user.emailVerified });
  const emails = new Map<string, string | null>();
  for (const { userId, update, disables, enables, previousEmail } of plan.updates) {
    await store.updateUser(userId, update);
    const subject = { id: userId, email: update.email ?? previousEmail };
    emails.set(userId, subject.email);
    if (update.email !== undefined) await emitEvent(store, now, 'user.email_changed', subject, { previousEmail });
    if (disables) {
      // A disabled user signs in no more: the sessions they hold end with it.
      const revokedIds = await store.deleteSessions(userId, now);
      await emitEvent(store, now, 'user.disabled', subject, { actor });
      await reportSessionsRevoked(store, now, subject, revokedIds, 'disabled');
    }
    if (enables) await emitEvent(store, now, 'user.enabled', subject, { actor });
  }
  await store.insertLinks(plan.links);
  // A new user's links are part of its creation; an existing user's are new ways in.
  for (const link of plan.links) {
    const email = emails.get(link.userId);
    if (email !== undefined)
      await emitEvent(store, now, 'user.provider_linked', { id: link.userId, email }, { provider: link.provider, providerLogin: link.login });
  }
}

/**
 * Plans and writes one batch in one transaction. When the batch cannot be written (a line that
 * collides with a user another writer added meanwhile), each of its lines is tried on its own,
 * so only the line at fault is refused.
 */
async function importBatch(store: TransferStore, batch: readonly Pending[], options: ImportOptions, actor: ImportActor): Promise<LineResult[]> {
  if (options.dryRun) return (await planBatch(store, batch, options)).results;
  try {
    return await store.transaction(async (tx) => {
      const plan = await planBatch(tx, batch, options);
      await writePlan(tx, plan, { now: options.now, actor: actor.actor });
      return plan.results;
    });
  } catch (error) {
    if (batch.length === 1) {
      const [only] = batch;
      return [{ line: only?.line ?? 0, status: 'failed', error: `could not be stored (${(error as Error).message.slice(0, 120)})` }];
    }
    const results: LineResult[] = [];
    for (const item of batch) results.push(...(await importBatch(store, [item], options, actor)));
    return results;
  }
}

/**
 * Imports every line of `lines` (numbered from 1; blank lines are passed over), telling
 * `onResult` each line's outcome in order. Audited once at the end (`users_imported`), unless a
 * dry run, which writes nothing.
 */
export async function importUsers(
  deps: ImportDeps,
  lines: AsyncIterable<string> | Iterable<string>,
  options: ImportOptions,
  actor: ImportActor,
  onResult: (result: LineResult) => void = () => {},
): Promise<ImportSummary> {
  const summary: ImportSummary = { imported: 0, updated: 0, skipped: 0, failed: 0 };
  let batch: Pending[] = [];
  let lineNumber = 0;
  const flush = async (): Promise<void> => {
    if (batch.length === 0) return;
    for (const result of await importBatch(deps.store, batch, options, actor)) {
      summary[result.status] += 1;
      onResult(result);
    }
    batch = [];
  };
  for await (const raw of lines) {
    lineNumber += 1;
    // A file saved with a byte-order mark: readline keeps it on the first line.
    const text = lineNumber === 1 && raw.charCodeAt(0) === 0xfeff ? raw.slice(1) : raw;
    if (text.trim() === '') continue;
    batch.push({ line: lineNumber, parsed: parseImportLine(text) });
    if (batch.length >= IMPORT_BATCH_LINES) await flush();
  }
  await flush();
  if (!options.dryRun) {
    await deps.audit.recordEvent({
      type: 'users_imported',
      userId: null,
      ip: actor.ip,
      userAgent: actor.userAgent,
      metadata: { actor: actor.actor, onConflict: options.onConflict, ...summary },
      at: options.now,
    });
  }
  return summary;
}
