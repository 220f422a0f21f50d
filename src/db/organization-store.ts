/** @module OrganizationStore over Kysely. */
import { sql, type Kysely, type Selectable } from 'kysely';
import type { Invitation, Member, Organization, OrganizationStore } from '../organizations/store.js';
import { isUniqueViolation } from './errors.js';
import type { Database, OrganizationInvitationsTable, OrganizationsTable } from './schema.js';

type Count = number | string | bigint;

function toOrganization(row: Selectable<OrganizationsTable>): Organization {
  return { id: row.id, name: row.name, slug: row.slug, createdAt: new Date(Number(row.created_at)), updatedAt: new Date(Number(row.updated_at)) };
}

function toInvitation(row: Selectable<OrganizationInvitationsTable>): Invitation {
  return {
    id: row.id,
    organizationId: row.organization_id,
    email: row.email,
    role: row.role,
    invitedBy: row.invited_by,
    expiresAt: new Date(Number(row.expires_at)),
    createdAt: new Date(Number(row.created_at)),
  };
}

function toMember(row: { user_id: string; email: string | null; role: string; joined_at: number }): Member {
  return { userId: row.user_id, email: row.email, role: row.role, joinedAt: new Date(Number(row.joined_at)) };
}

/** `%`, `_` and the escape character itself match literally in a LIKE pattern. */
function likeContaining(text: string): string {
  return `%${text.replace(/[\\%_]/g, (char) => `\\${char}`)}%`;
}

export function createOrganizationStore(db: Kysely<Database>, dialect: 'sqlite' | 'postgres'): OrganizationStore {
  return { ...organizationMethods(db, dialect), ...memberMethods(db), ...lockMethods(db, dialect), ...invitationMethods(db), ...searchMethods(db) };
}

function organizationMethods(
  db: Kysely<Database>,
  dialect: 'sqlite' | 'postgres',
): Pick<
  OrganizationStore,
  'createOrganization' | 'slugTaken' | 'findOrganization' | 'findOrganizationBySlug' | 'updateOrganization' | 'deleteOrganization' | 'lockOrganization'
> {
  return {
    async createOrganization(organization, ownerId) {
      // ON CONFLICT rather than catching the error: on PostgreSQL a failed statement would abort the
      // whole transaction the flow runs it in.
      const inserted = await db
        .insertInto('organizations')
        .values({
          id: organization.id,
          name: organization.name,
          slug: organization.slug,
          created_at: organization.createdAt.getTime(),
          updated_at: organization.updatedAt.getTime(),
        })
        .onConflict((conflict) => conflict.column('slug').doNothing())
        .executeTakeFirst();
      if (Number(inserted.numInsertedOrUpdatedRows ?? 0) === 0) return false;
      await db
        .insertInto('organization_members')
        .values({ organization_id: organization.id, user_id: ownerId, role: 'owner', joined_at: organization.createdAt.getTime() })
        .execute();
      return true;
    },
    async slugTaken(slug) {
      return (await db.selectFrom('organizations').select('id').where('slug', '=', slug).executeTakeFirst()) !== undefined;
    },
    async findOrganization(id) {
      const row = await db.selectFrom('organizations').selectAll().where('id', '=', id).executeTakeFirst();
      return row === undefined ? null : toOrganization(row);
    },
    async findOrganizationBySlug(slug) {
      const row = await db.selectFrom('organizations').selectAll().where('slug', '=', slug).executeTakeFirst();
      return row === undefined ? null : toOrganization(row);
    },
    async updateOrganization(id, changes, now) {
      if (changes.slug !== undefined) {
        const holder = await db.selectFrom('organizations').select('id').where('slug', '=', changes.slug).executeTakeFirst();
        if (holder !== undefined && holder.id !== id) return 'slug_taken';
      }
      try {
        const result = await db
          .updateTable('organizations')
          .set({ ...changes, updated_at: now.getTime() })
          .where('id', '=', id)
          .executeTakeFirst();
        return Number(result.numUpdatedRows) > 0 ? 'updated' : 'missing';
      } catch (error) {
        // Taken by another request since the check: the caller answers 409 and its transaction rolls back.
        if (isUniqueViolation(error)) return 'slug_taken';
        throw error;
      }
    },
    async deleteOrganization(id) {
      const result = await db.deleteFrom('organizations').where('id', '=', id).executeTakeFirst();
      return Number(result.numDeletedRows) > 0;
    },
    async lockOrganization(id) {
      const query = db.selectFrom('organizations').select('id').where('id', '=', id);
      return (await (dialect === 'postgres' ? query.forUpdate() : query).executeTakeFirst()) !== undefined;
    },
  };
}

function memberMethods(
  db: Kysely<Database>,
): Pick<OrganizationStore, 'listMemberships' | 'findMember' | 'listMembers' | 'countOwners' | 'countMembers' | 'addMember' | 'setMemberRole' | 'removeMember'> {
  const members = () =>
    db.selectFrom('organization_members as m').innerJoin('users as u', 'u.id', 'm.user_id').select(['m.user_id', 'u.email', 'm.role', 'm.joined_at']);
  return {
    async listMemberships(userId) {
      const rows = await db
        .selectFrom('organization_members as m')
        .innerJoin('organizations as o', 'o.id', 'm.organization_id')
        .selectAll('o')
        .select(['m.role', 'm.joined_at'])
        .where('m.user_id', '=', userId)
        .orderBy('o.name')
        .orderBy('o.id')
        .execute();
      return rows.map((row) => ({ organization: toOrganization(row), role: row.role, joinedAt: new Date(Number(row.joined_at)) }));
    },
    async findMember(organizationId, userId) {
      const row = await members().where('m.organization_id', '=', organizationId).where('m.user_id', '=', userId).executeTakeFirst();
      return row === undefined ? null : toMember(row);
    },
    async listMembers(organizationId) {
      const rows = await members().where('m.organization_id', '=', organizationId).orderBy('m.joined_at').orderBy('m.user_id').execute();
      return rows.map(toMember);
    },
    countOwners: (organizationId) => countOf(db, organizationId, 'owner', null),
    countMembers: (organizationId) => countOf(db, organizationId, null, null),
    async addMember(organizationId, userId, role, now) {
      const inserted = await db
        .insertInto('organization_members')
        .values({ organization_id: organizationId, user_id: userId, role, joined_at: now.getTime() })
        .onConflict((conflict) => conflict.columns(['organization_id', 'user_id']).doNothing())
        .executeTakeFirst();
      return Number(inserted.numInsertedOrUpdatedRows ?? 0) > 0;
    },
    async setMemberRole(organizationId, userId, role) {
      const result = await db
        .updateTable('organization_members')
        .set({ role })
        .where('organization_id', '=', organizationId)
        .where('user_id', '=', userId)
        .executeTakeFirst();
      return Number(result.numUpdatedRows) > 0;
    },
    async removeMember(organizationId, userId) {
      const result = await db.deleteFrom('organization_members').where('organization_id', '=', organizationId).where('user_id', '=', userId).executeTakeFirst();
      return Number(result.numDeletedRows) > 0;
    },
  };
}

function invitationMethods(
  db: Kysely<Database>,
): Pick<
  OrganizationStore,
  'replaceInvitation' | 'listInvitations' | 'findInvitation' | 'findInvitationByEmail' | 'deleteInvitation' | 'deleteExpiredInvitations'
> {
  return {
    async replaceInvitation(invitation, secretHash) {
      await db.deleteFrom('organization_invitations').where('organization_id', '=', invitation.organizationId).where('email', '=', invitation.email).execute();
      await db
        .insertInto('organization_invitations')
        .values({
          id: invitation.id,
          organization_id: invitation.organizationId,
          email: invitation.email,
          role: invitation.role,
          secret_hash: secretHash,
          invited_by: invitation.invitedBy,
          expires_at: invitation.expiresAt.getTime(),
          created_at: invitation.createdAt.getTime(),
        })
        .execute();
    },
    async listInvitations(organizationId, now) {
      const rows = await db
        .selectFrom('organization_invitations')
        .selectAll()
        .where('organization_id', '=', organizationId)
        .where('expires_at', '>', now.getTime())
        .orderBy('created_at', 'desc')
        .orderBy('id')
        .execute();
      return rows.map(toInvitation);
    },
    async findInvitationByEmail(organizationId, email) {
      const row = await db
        .selectFrom('organization_invitations')
        .selectAll()
        .where('organization_id', '=', organizationId)
        .where('email', '=', email)
        .executeTakeFirst();
      return row === undefined ? null : toInvitation(row);
    },
    async findInvitation(id) {
      const row = await db.selectFrom('organization_invitations').selectAll().where('id', '=', id).executeTakeFirst();
      return row === undefined ? null : { ...toInvitation(row), secretHash: row.secret_hash };
    },
    async deleteInvitation(id, organizationId) {
      let query = db.deleteFrom('organization_invitations').where('id', '=', id);
      if (organizationId !== undefined) query = query.where('organization_id', '=', organizationId);
      return Number((await query.executeTakeFirst()).numDeletedRows) > 0;
    },
    async deleteExpiredInvitations(now) {
      const result = await db.deleteFrom('organization_invitations').where('expires_at', '<=', now.getTime()).executeTakeFirst();
      return Number(result.numDeletedRows);
    },
  };
}

/** The operators' search. */
function searchMethods(db: Kysely<Database>): Pick<OrganizationStore, 'searchOrganizations'> {
  return {
    async searchOrganizations({ query, limit, after }) {
      let select = db
        .selectFrom('organizations as o')
        .selectAll('o')
        .select((eb) =>
          eb.selectFrom('organization_members as m').whereRef('m.organization_id', '=', 'o.id').select(eb.fn.countAll<Count>().as('n')).as('members'),
        );
      if (query !== null) {
        const pattern = likeContaining(query.toLowerCase());
        select = select.where((eb) =>
          eb.or([
            sql<boolean>`lower(${eb.ref('o.name')}) like ${pattern} escape '\\'`,
            sql<boolean>`${eb.ref('o.slug')} like ${pattern} escape '\\'`,
            eb('o.id', '=', query),
          ]),
        );
      }
      if (after !== null) {
        const at = after.createdAt.getTime();
        select = select.where((eb) => eb.or([eb('o.created_at', '>', at), eb.and([eb('o.created_at', '=', at), eb('o.id', '>', after.id)])]));
      }
      const rows = await select.orderBy('o.created_at').orderBy('o.id').limit(limit).execute();
      return rows.map((row) => ({ ...toOrganization(row), members: Number(row.members ?? 0) }));
    },
  };
}

/** A count of an organization's members (of one role; besides one person). */
async function countOf(db: Kysely<Database>, organizationId: string, role: string | null, exceptUserId: string | null): Promise<number> {
  let select = db
    .selectFrom('organization_members')
    .select((eb) => eb.fn.countAll<Count>().as('n'))
    .where('organization_id', '=', organizationId);
  if (role !== null) select = select.where('role', '=', role);
  if (exceptUserId !== null) select = select.where('user_id', '!=', exceptUserId);
  return Number((await select.executeTakeFirstOrThrow()).n);
}

/** What an account's deletion locks and reads. */
function lockMethods(db: Kysely<Database>, dialect: 'sqlite' | 'postgres'): Pick<OrganizationStore, 'lockMemberships'> {
  return {
    async lockMemberships(userId) {
      const memberOf = db
        .selectFrom('organizations')
        .select('id')
        .where('id', 'in', db.selectFrom('organization_members').select('organization_id').where('user_id', '=', userId))
        .orderBy('id');
      const rows = await (dialect === 'postgres' ? memberOf.forUpdate() : memberOf).execute();
      const memberships = [];
      for (const { id } of rows) {
        const mine = await db
          .selectFrom('organization_members')
          .select('role')
          .where('organization_id', '=', id)
          .where('user_id', '=', userId)
          .executeTakeFirst();
        if (mine === undefined) continue;
        memberships.push({
          organizationId: id,
          role: mine.role,
          otherOwners: await countOf(db, id, 'owner', userId),
          otherMembers: await countOf(db, id, null, userId),
        });
      }
      return memberships;
    },
  };
}
