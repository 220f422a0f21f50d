/** @module The user as the domain sees it, and the storage verbs the features need. */
import { isSupportedLanguage, type Language } from '../i18n/languages.js';

export interface User {
  id: string;
  email: string | null;
  emailVerified: boolean;
  /** bcrypt hash; null when the user signs in only through a provider. Never leaves the server. */
  passwordHash: string | null;
  createdAt: Date;
  lastLoginAt: Date | null;
  /** Set by an operator (src/admin/): no sign-in by any method while set. */
  disabledAt: Date | null;
  /**
   * The account's credentials were set up before this address was proved, by someone who may not
   * own it: a password chosen by whoever registered the address (and no browser signed in to the
   * account has verified it since), or whatever an account moved to this address by a link
   * confirmed from outside it already held. The first sign-in by a proof of the mailbox removes
   * them all (users/secure-unverified.ts). Column `password_unproven`, named for its first use.
   */
  passwordUnproven: boolean;
  /**
   * The language of the account's emails, remembered from the pages it uses; null (or absent, for
   * a user built outside the store): DEFAULT_LANGUAGE.
   */
  language?: Language | null;
}

/** A stored language value as the domain sees it: anything no longer supported reads as none. */
export function languageOf(value: string | null | undefined): Language | null {
  return isSupportedLanguage(value) ? value : null;
}

/** What a client may see of a user (GET /api/auth/session). */
export interface PublicUser {
  id: string;
  email: string | null;
  emailVerified: boolean;
  createdAt: string;
  lastLoginAt: string | null;
}

export function toPublicUser(user: User): PublicUser {
  return {
    id: user.id,
    email: user.email,
    emailVerified: user.emailVerified,
    createdAt: user.createdAt.toISOString(),
    lastLoginAt: user.lastLoginAt?.toISOString() ?? null,
  };
}

export interface NewUser {
  id: string;
  email: string | null;
  passwordHash: string | null;
  emailVerified: boolean;
  createdAt: Date;
  /** The language of the page the account was created from; null or absent: none known. */
  language?: Language | null;
}

export interface UserStore {
  findUserById(id: string): Promise<User | null>;
  findUserByEmail(email: string): Promise<User | null>;
  /** 'email_taken' when another user holds the email in any letter case. */
  createUser(user: NewUser): Promise<'created' | 'email_taken'>;
  recordLogin(userId: string, at: Date): Promise<void>;
  setPassword(userId: string, passwordHash: string): Promise<void>;
  /** Remembers the account's language (callers write only when it differs from the stored one). */
  setLanguage(userId: string, language: Language): Promise<void>;
  /** Replaces the hash only while it is still `previousHash` (a password changed meanwhile wins); true when replaced. */
  rehashPassword(userId: string, previousHash: string, passwordHash: string): Promise<boolean>;
  /**
   * Removes the password (account pre-hijacking defence). `passwordUnproven` stays as it is: the
   * other credentials it covers are not proven by that; `markEmailVerified` clears it.
   */
  removePassword(userId: string): Promise<void>;
  /**
   * Marks the account's credentials as set up before its address was proved (`passwordUnproven`):
   * the owner's first sign-in by a proof of the mailbox then removes them.
   */
  markCredentialsUnproven(userId: string): Promise<void>;
  /**
   * Marks the address verified. `passwordProven` (default true): the proof came from someone who
   * also holds the account's password — a browser signed in to the account — so the password
   * counts as its owner's; false leaves a password chosen before the proof marked as unproven.
   */
  markEmailVerified(userId: string, options?: { passwordProven: boolean }): Promise<void>;
  /**
   * Deletes the user; its sessions, tokens and provider links go with it (foreign keys cascade).
   * Audit rows stay, keyed by the user id. False when there was no such user.
   */
  deleteUser(userId: string): Promise<boolean>;
  /**
   * Moves the user to `email`, verified (the link to it was followed). 'email_taken' when another
   * user holds it: the unique index decides, also against a registration a moment before. On
   * PostgreSQL that refusal aborts the surrounding transaction: the caller must end it.
   */
  changeEmail(userId: string, email: string): Promise<'changed' | 'email_taken'>;
  /**
   * Holds the user's row until the transaction ends (PostgreSQL; SQLite has one writer anyway), so
   * that two changes that each check "another way in remains" cannot both remove one.
   */
  lockUser(userId: string): Promise<void>;
  /**
   * Sets or clears `disabled_at` (an operator's disable or enable), so that it can share a
   * transaction with the sessions it revokes and the event that reports it. False when there is no such user.
   */
  setDisabledAt(userId: string, at: Date | null): Promise<boolean>;
}

/**
 * Remembers the language a page signed in or was viewed in, for the account's emails: a write
 * only when one is known and differs from the stored one, so repeated visits cost nothing.
 */
export async function rememberLanguage(
  users: Pick<UserStore, 'setLanguage'>,
  user: Pick<User, 'id' | 'language'>,
  language: Language | null | undefined,
): Promise<void> {
  if (language === null || language === undefined || language === (user.language ?? null)) return;
  await users.setLanguage(user.id, language);
}
