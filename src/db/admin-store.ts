/** @module AdminStore over Kysely: the operators' reads (src/admin/). */
import { PostgresAdapter, sql, type ExpressionBuilder, type Kysely, type Selectable } from 'kysely';
import type { AdminStore, UserCursor, UserSearch } from '../admin/store.js';
import type { AuditEventType, AuditMetadata } from '../audit/audit-log.js';
import type { Database, UsersTable } from './schema.js';
import { toUser } from './user-store.js';

/** `%`, `_` and the escape character itself match literally in a LIKE pattern. */
function likeContaining(text: string): string {
  return `%${text.replace(/[\\%_]/g, (char) => `\\${char}`)}%`;
}

/** How the user search trades walking for scanning (below); tests make both small to reach every path with a few users. */
export interface SearchTuning {
  /**
   * How many users after the cursor, in the list's order, a search walks before it scans the rest
   * instead: a term common enough fills its page within them (a few milliseconds), and a rare one
   * costs at most that much more than one scan of the table.
   */
  walkRows: number;
  /** SQLite: a term with more trigram candidates than this is common: walking the order beats sorting them all. */
  candidateCap: number;
}

const DEFAULT_TUNING: SearchTuning = { walkRows: 20_000, candidateCap: 5_000 };

export function createAdminStore(db: Kysely<Database>, tuning: SearchTuning = DEFAULT_TUNING): AdminStore {
  return { ...userMethods(db, tuning), ...auditMethods(db) };
}

/** The operators' view of users: search, what each has set up, disabling. */
function userMethods(db: Kysely<Database>, tuning: SearchTuning): Pick<AdminStore, 'searchUsers' | 'userOverview'> {
  const searcher: Searcher = { db, dialect: db.getExecutor().adapter instanceof PostgresAdapter ? 'postgres' : 'sqlite', ...tuning };
  return {
    searchUsers: (search) => searchUsers(searcher, search),

    async userOverview(userId, now) {
      const [sessions, accounts, totp, codes, passkeys] = await Promise.all([
        db
          .selectFrom('sessions')
          .select((eb) => eb.fn.countAll<number | string | bigint>().as('count'))
          .where('user_id', '=', userId)
          .where('expires_at', '>', now.getTime())
          .executeTakeFirstOrThrow(),
        db.selectFrom('accounts').select(['provider', 'provider_login', 'created_at']).where('user_id', '=', userId).orderBy('created_at').execute(),
        db.selectFrom('user_totp').select('enabled_at').where('user_id', '=', userId).executeTakeFirst(),
        db
          .selectFrom('recovery_codes')
          .select((eb) => eb.fn.countAll<number | string | bigint>().as('count'))
          .where('user_id', '=', userId)
          .where('used_at', 'is', null)
          .executeTakeFirstOrThrow(),
        db
          .selectFrom('passkeys')
          .select((eb) => eb.fn.countAll<number | string | bigint>().as('count'))
          .where('user_id', '=', userId)
          .executeTakeFirstOrThrow(),
      ]);
      const twoFactorEnabled = totp !== undefined && totp.enabled_at !== null;
      return {
        sessions: Number(sessions.count),
        providers: accounts.map((row) => ({ provider: row.provider, login: row.provider_login, linkedAt: new Date(Number(row.created_at)) })),
        twoFactorEnabled,
        recoveryCodesLeft: twoFactorEnabled ? Number(codes.count) : 0,
        passkeys: Number(passkeys.count),
      };
    },
  };
}

// --- the user search ---------------------------------------------------------------------------

type UserRow = Selectable<UsersTable>;

interface Searcher extends SearchTuning {
  db: Kysely<Database>;
  dialect: 'sqlite' | 'postgres';
}

/** What a search matches: `email LIKE pattern ESCAPE '\\'`, or the id itself. */
interface Match {
  pattern: string;
  id: string;
}

/**
 * PostgreSQL: pg_trgm draws a trigram from any three letters or digits in a row, so the trigram
 * index narrows such a term down. From a term without one it may draw none, and the index would
 * then be read whole: such terms are walked and scanned.
 */
const HAS_TRIGRAM = /[a-z0-9]{3}/;
/** SQLite: FTS5 answers a trigram LIKE from its index when the pattern has three characters in a row that are not wildcards. */
const HAS_FTS_LITERAL = /[^%_]{3}/u;

/**
 * Users whose email contains the query or whose id is the query, oldest first (creation time,
 * then id), after the cursor: however the rows are found, the same condition decides them, in
 * the same order, so every path gives the same answer.
 */
async function searchUsers(searcher: Searcher, { query, limit, after }: UserSearch) {
  const { db, dialect } = searcher;
  const take = limit + 1;
  if (query === null) return (await page(db, after, take).execute()).map(toUser);
  const match: Match = { pattern: likeContaining(query), id: query };
  let rows: UserRow[] | null = null;
  // PostgreSQL's planner chooses between the trigram index (a rare term) and walking the order (a common one).
  if (dialect === 'postgres' && HAS_TRIGRAM.test(query)) rows = await page(db, after, take, match).execute();
  if (dialect === 'sqlite' && HAS_FTS_LITERAL.test(query)) rows = await sqliteCandidates(searcher, query, match, after, take);
  rows ??= await walkThenScan(searcher, match, after, take);
  return rows.map(toUser);
}

/** Up to `take` users in the list's order after `after` (and up to `through`), matching `match` when given. */
function page(db: Kysely<Database>, after: UserCursor | null, take: number, match?: Match, through?: UserCursor) {
  let select = db.selectFrom('users').selectAll();
  // Row values, not `created_at > x or (created_at = x and id > y)`: the index on (created_at, id) starts at the cursor.
  if (after !== null) select = select.where((eb) => eb(eb.refTuple('created_at', 'id'), '>', eb.tuple(after.createdAt, after.id)));
  if (through !== undefined) select = select.where((eb) => eb(eb.refTuple('created_at', 'id'), '<=', eb.tuple(through.createdAt, through.id)));
  if (match !== undefined) select = select.where((eb) => matching(eb, match));
  return select.orderBy('created_at').orderBy('id').limit(take);
}

function matching(eb: ExpressionBuilder<Database, 'users'>, match: Match) {
  // Emails are stored lower-cased, and the query arrives lower-cased: LIKE's case rules
  // (case-insensitive on SQLite for ASCII, sensitive on PostgreSQL) cannot differ.
  // ESCAPE named on both: SQLite has no default escape character.
  return eb.or([sql<boolean>`${eb.ref('email')} like ${match.pattern} escape '\\'`, eb('id', '=', match.id)]);
}

/**
 * SQLite, a term FTS5 can look up: when its candidates (users whose email holds every trigram of
 * the term, and the user whose id is the term) are few, they are read by id, and the LIKE decides.
 * Null when there are more than `candidateCap`: a common term, for which walking the order finds a
 * page sooner than sorting every candidate.
 */
async function sqliteCandidates(
  { db, candidateCap }: Searcher,
  query: string,
  match: Match,
  after: UserCursor | null,
  take: number,
): Promise<UserRow[] | null> {
  // FTS5's LIKE has no ESCAPE: `%` and `_` in the term are wildcards there, so it finds more, never fewer.
  const containing = `%${query}%`;
  const counted = await sql<{ n: number }>`
    select count(*) as n from (select 1 from users_email_search where email like ${containing} limit ${candidateCap + 1})`.execute(db);
  if ((counted.rows[0]?.n ?? 0) > candidateCap) return null;
  const afterCursor = after === null ? sql`` : sql`and (users.created_at, users.id) > (${after.createdAt}, ${after.id})`;
  // CROSS JOIN: SQLite keeps this order of the loops, candidates outside, users looked up by id.
  const { rows } = await sql<UserRow>`
    select users.* from (select user_id from users_email_search where email like ${containing} union select ${match.id}) as candidates
    cross join users on users.id = candidates.user_id
    where (users.email like ${match.pattern} escape '\\' or users.id = ${match.id}) ${afterCursor}
    order by users.created_at, users.id limit ${take}`.execute(db);
  return rows;
}

/**
 * A term no index narrows down (too short, or too common for SQLite's candidates): the first
 * `walkRows` users after the cursor are walked in order, where a common term fills its page; if it
 * does not, the rest is scanned once and sorted, as every search was before the indexes. The edge
 * between the two is read first, so they meet at a key, not at a number of rows that may change.
 */
async function walkThenScan({ db, dialect, walkRows }: Searcher, match: Match, after: UserCursor | null, take: number): Promise<UserRow[]> {
  const edgeRow = await page(db, after, 1)
    .clearSelect()
    .select(['created_at', 'id'])
    .offset(walkRows - 1)
    .executeTakeFirst();
  const edge = edgeRow && { createdAt: edgeRow.created_at, id: edgeRow.id };
  const near = await page(db, after, take, match, edge).execute();
  if (near.length === take || edge === undefined) return near;
  return [...near, ...(await scanAfter(db, dialect, match, edge, take - near.length))];
}

/** Every user after `after` read once, the matching ones sorted: no index walk that a rare term would make long. */
async function scanAfter(db: Kysely<Database>, dialect: Searcher['dialect'], match: Match, after: UserCursor, take: number): Promise<UserRow[]> {
  if (dialect === 'sqlite') {
    const { rows } = await sql<UserRow>`
      select * from users not indexed
      where (email like ${match.pattern} escape '\\' or id = ${match.id}) and (created_at, id) > (${after.createdAt}, ${after.id})
      order by created_at, id limit ${take}`.execute(db);
    return rows;
  }
  // The planner would walk the order's index (it cannot know the term is rare), or, for a term
  // without a trigram, read the whole trigram index: both cost more than one scan and a sort.
  return db.transaction().execute(async (trx) => {
    await sql`set local enable_indexscan = off`.execute(trx);
    await sql`set local enable_bitmapscan = off`.execute(trx);
    return page(trx, after, take, match).execute();
  });
}

/** The operators' read of the audit log. */
function auditMethods(db: Kysely<Database>): Pick<AdminStore, 'searchAuditEvents'> {
  return {
    async searchAuditEvents({ userId, type, since, until, limit, before }) {
      // Newest first by (created_at, id): a walk of the index of the filter — (user_id, created_at,
      // id), (event_type, created_at, id) or (created_at, id), migration 021 — from the cursor or
      // the range's end, which stops after a page, however many rows the table or the range holds.
      let select = db.selectFrom('audit_events').selectAll();
      if (userId !== null) select = select.where('user_id', '=', userId);
      if (type !== null) select = select.where('event_type', '=', type);
      if (since !== null) select = select.where('created_at', '>=', since);
      if (until !== null) select = select.where('created_at', '<=', until);
      if (before !== null) select = select.where((eb) => eb(eb.refTuple('created_at', 'id'), '<', eb.tuple(before.at, before.id)));
      const rows = await select
        .orderBy('created_at', 'desc')
        .orderBy('id', 'desc')
        .limit(limit + 1)
        .execute();
      return rows.map((row) => ({
        id: Number(row.id),
        type: row.event_type as AuditEventType,
        userId: row.user_id,
        ip: row.ip,
        userAgent: row.user_agent,
        metadata: JSON.parse(row.metadata) as AuditMetadata,
        at: new Date(Number(row.created_at)),
      }));
    },
  };
}
