/**
 * @module The migration list. Imported statically (not read from a folder) so that the same
 * list runs from TypeScript sources in tests and from the compiled build in production.
 * Names sort in the order they apply.
 */
import type { Migration } from 'kysely';
import * as m001 from './001-users-sessions-audit.js';
import * as m002 from './002-email-tokens-outbox.js';
import * as m004 from './004-accounts.js';
import * as m005 from './005-outbox-delivery.js';
import * as m006 from './006-oauth-consumed-sign-ins.js';
import * as m007 from './007-account-self-service.js';
import * as m008 from './008-two-factor.js';
import * as m009 from './009-email-sign-in.js';
import * as m010 from './010-passkeys.js';
import * as m011 from './011-disabled-accounts.js';
import * as m012 from './012-unproven-passwords.js';
import * as m013 from './013-oauth-pending-links.js';
import * as m014 from './014-user-import.js';
import * as m015 from './015-imported-password-hashes.js';
import * as m016 from './016-webhooks.js';
import * as m017 from './017-user-language.js';
import * as m018 from './018-oidc-provider.js';
import * as m019 from './019-organizations.js';
import * as m020 from './020-user-search-index.js';
import * as m021 from './021-audit-search-order.js';

export const migrations: Record<string, Migration> = {
  '001-users-sessions-audit': m001,
  '002-email-tokens-outbox': m002,
  '004-accounts': m004,
  '005-outbox-delivery': m005,
  '006-oauth-consumed-sign-ins': m006,
  '007-account-self-service': m007,
  '008-two-factor': m008,
  '009-email-sign-in': m009,
  '010-passkeys': m010,
  '011-disabled-accounts': m011,
  '012-unproven-passwords': m012,
  '013-oauth-pending-links': m013,
  '014-user-import': m014,
  '015-imported-password-hashes': m015,
  '016-webhooks': m016,
  '017-user-language': m017,
  '018-oidc-provider': m018,
  '019-organizations': m019,
  '020-user-search-index': m020,
  '021-audit-search-order': m021,
};
