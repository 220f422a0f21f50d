/**
 * @module Every capability, in the order its routes are mounted and documented. Adding one: its
 * folder with a `capability.ts`, its migration in src/db/migrations, and one line here
 * (docs/ARCHITECTURE.md, "How to add a capability").
 */
import { account } from './account/capability.js';
import { admin } from './admin/capability.js';
import { brand } from './brand/capability.js';
import type { Capability } from './capability.js';
import { emailSignIn } from './email-sign-in/capability.js';
import { emailVerification } from './email-verification/capability.js';
import { twoFactor } from './mfa/capability.js';
import { providers } from './oauth/capability.js';
import { oidcProvider } from './oidc-provider/capability.js';
import { organizations } from './organizations/capability.js';
import { passkeys } from './passkeys/capability.js';
import { passwordReset } from './password-reset/capability.js';
import { passwordSignIn } from './password-sign-in/capability.js';
import { sessions } from './session/capability.js';
import { userTransfer } from './user-transfer/capability.js';
import { pages } from './web/capability.js';
import { webhooks } from './webhooks/capability.js';

export const CAPABILITIES: readonly Capability[] = [
  passwordSignIn,
  sessions,
  account,
  twoFactor,
  emailVerification,
  passwordReset,
  emailSignIn,
  passkeys,
  pages,
  brand,
  providers,
  organizations,
  // Before admin: its /users/:id would take /users/export for a user id.
  userTransfer,
  // Before admin too: its key check on every /api/admin/* path would count a webhook request twice.
  webhooks,
  // Before admin too, for the same reason: its /clients routes sit behind the admin key check.
  oidcProvider,
  admin,
];
