/**
 * @module Who may do what inside an organization — Gatehouse's own management rights, and only
 * those: what a role lets someone do in an app is the app's to decide, from `role` and
 * `permissions`.
 *
 * - Every member reads the organization and its members.
 * - Admins and owners rename it, and invite, change and remove members, admins and custom roles.
 * - Only owners make or unmake owners (invite one, promote, demote, remove), and delete it.
 * - Anyone may leave. An organization with members always keeps an owner (`last_owner`).
 */
import { AppError, forbidden } from '../errors.js';

export function isManager(role: string): boolean {
  return role === 'owner' || role === 'admin';
}

const NO_RIGHT = 'You do not have the right to do this in this organization.';

/** Throws 403 `forbidden` unless `actorRole` manages the organization's members. */
export function assertManager(actorRole: string): void {
  if (!isManager(actorRole)) throw forbidden('forbidden', NO_RIGHT);
}

export function assertOwner(actorRole: string): void {
  if (actorRole !== 'owner') throw forbidden('forbidden', 'Only an owner of this organization may do this.');
}

/** Giving `role` to someone whose role is `currentRole` (null: not a member yet, an invitation). */
export function assertMayAssign(actorRole: string, currentRole: string | null, role: string): void {
  assertManager(actorRole);
  if ((role === 'owner' || currentRole === 'owner') && actorRole !== 'owner') assertOwner(actorRole);
}

/** Removing a member whose role is `targetRole`; anyone may remove themself. */
export function assertMayRemove(actorRole: string, targetRole: string, self: boolean): void {
  if (self) return;
  assertMayAssign(actorRole, targetRole, targetRole);
}

export function lastOwner(message = 'An organization must keep an owner. Make someone else an owner first.'): AppError {
  return new AppError('last_owner', 409, message);
}
