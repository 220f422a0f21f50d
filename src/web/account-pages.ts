/**
 * @module The account page (DESIGN §9.2) and the email change confirmation page, rendered on the
 * server as plain HTML and driven by /assets/account.js, which fills the lists from the API and
 * sends the forms. Their forms name their endpoint in `data-account-api` (not `data-api`, which
 * app.js sends): one script owns each form. The confirmation page spends its token only on POST.
 */
import type { PublicUser } from '../users/user.js';
import { html, renderLayout, type SafeHtml } from './html.js';
import { passwordRules, type PageContext } from './pages.js';

/** The word typed to confirm a deletion; account.js compares against the same attribute. */
const DELETE_CONFIRMATION = 'DELETE';

/** Outside any form: the list's buttons (rename, remove, unlink) read it, so it is not required for a form to submit. */
function listPasswordField(id: string, purpose: string): SafeHtml {
  return html`<div class="field">
<label for="${id}">Current password (${purpose})</label>
<input id="${id}" name="currentPassword" type="password" autocomplete="current-password">
</div>`;
}

function currentPasswordField(id: string): SafeHtml {
  return html`<div class="field">
<label for="${id}">Current password</label>
<input id="${id}" name="currentPassword" type="password" autocomplete="current-password" required>
</div>`;
}

function newPasswordWithRules(): SafeHtml {
  return html`<div class="field">
<label for="new-password">New password</label>
<input id="new-password" name="newPassword" type="password" autocomplete="new-password" required aria-describedby="password-rules" data-check-rules>
</div>
${passwordRules()}`;
}

export function renderAccountPage(ctx: PageContext, options: { user: PublicUser; hasPassword: boolean }): string {
  const { user, hasPassword } = options;
  return renderLayout({
    title: 'Manage your account',
    page: 'account',
    devMode: ctx.devMode,
    scripts: ['/assets/account.js', '/assets/webauthn.js', '/assets/passkeys.js'],
    body: html`${sessionsSection()}

${passwordSection(hasPassword)}

${emailSection(ctx, user, hasPassword)}

${linkedSignInsSection(hasPassword)}

${passkeysSection(hasPassword)}

${twoFactorSection(hasPassword)}

${downloadSection()}

${deleteSection(hasPassword)}

<nav class="links" aria-label="Other actions"><p><a href="/dashboard">Back to your account</a></p></nav>`,
  });
}

/*
 * The page's sections, in its order. Where the account has a password, each change asks for it
 * again (the server re-authenticates); an account without one has no field to fill.
 */

function sessionsSection(): SafeHtml {
  return html`<section class="section" aria-labelledby="sessions-title">
<h2 id="sessions-title">Where you are signed in</h2>
<ul id="session-list" class="item-list" aria-live="polite"><li>Loading…</li></ul>
<button type="button" id="revoke-others" class="secondary">Sign out everywhere else</button>
</section>`;
}

/** A change form when the account has a password; otherwise how to set one. */
function passwordSection(hasPassword: boolean): SafeHtml {
  return html`<section class="section" aria-labelledby="password-title">
<h2 id="password-title">Password</h2>
${
  hasPassword
    ? html`<form id="password-form" method="post" action="/account" novalidate data-account-api="/api/auth/password/change">
${currentPasswordField('password-current')}
${newPasswordWithRules()}
<button type="submit" class="primary" data-busy-text="Saving…">Change password</button>
</form>`
    : html`<p>Your account has no password: you sign in with a linked provider. To set one, use <a href="/forgot-password">Forgot your password?</a> with your email address.</p>`
}
</section>`;
}

function emailSection(ctx: PageContext, user: PublicUser, hasPassword: boolean): SafeHtml {
  return html`<section class="section" aria-labelledby="email-title">
<h2 id="email-title">Email address</h2>
<p>Now: <strong id="current-email">${user.email ?? 'none'}</strong></p>
<form id="email-form" method="post" action="/account" novalidate data-account-api="/api/auth/email/change">
<div class="field">
<label for="new-email">New email address</label>
<input id="new-email" name="newEmail" type="email" autocomplete="email" required>
</div>
${hasPassword ? currentPasswordField('email-current') : null}
<button type="submit" class="primary" data-busy-text="Sending…">Send a link to the new address</button>
</form>
${ctx.devMode ? html`<div id="dev-link" class="dev-link" hidden><p><strong>Development mode:</strong> <a id="dev-link-anchor" href="#"></a></p></div>` : null}
</section>`;
}

function linkedSignInsSection(hasPassword: boolean): SafeHtml {
  return html`<section class="section" aria-labelledby="linked-title">
<h2 id="linked-title">Linked sign-ins</h2>
<ul id="linked-list" class="item-list" aria-live="polite"><li>Loading…</li></ul>
${hasPassword ? listPasswordField('linked-current', 'to unlink a sign-in') : null}
</section>`;
}

/** The list, and the add form account.js shows when the browser can create passkeys. */
function passkeysSection(hasPassword: boolean): SafeHtml {
  return html`<section class="section" aria-labelledby="passkeys-title">
<h2 id="passkeys-title">Passkeys</h2>
<p>Sign in with your fingerprint, face, screen lock or security key instead of a password.</p>
<ul id="passkey-list" class="item-list" aria-live="polite"><li>Loading…</li></ul>
${hasPassword ? listPasswordField('passkey-manage-current', 'to rename or remove a passkey') : null}
<p id="passkey-unsupported" hidden>This browser cannot create passkeys.</p>
<form id="passkey-add-form" method="post" action="/account" novalidate data-passkey-api="/api/auth/passkeys/register/options" hidden>
<div class="field">
<label for="passkey-name">Name (optional)</label>
<input id="passkey-name" name="name" type="text" maxlength="64" autocomplete="off" placeholder="Work laptop">
</div>
${hasPassword ? currentPasswordField('passkey-current') : null}
<button type="submit" class="primary" data-busy-text="Waiting for your passkey…">Add a passkey</button>
</form>
</section>`;
}

/** Every step's form is hidden: account.js shows the ones that fit the account's state (off, being set up, on). */
function twoFactorSection(hasPassword: boolean): SafeHtml {
  return html`<section class="section" aria-labelledby="mfa-title">
<h2 id="mfa-title">Two-factor sign-in</h2>
<p id="mfa-status">Loading…</p>
<form id="mfa-setup-form" method="post" action="/account" novalidate data-account-api="/api/auth/2fa/totp/setup" hidden>
<p>Sign in with a code from an authenticator app as well as your password.</p>
${hasPassword ? currentPasswordField('mfa-setup-current') : null}
<button type="submit" class="primary" data-busy-text="Preparing…">Set up an authenticator app</button>
</form>
<form id="mfa-enable-form" method="post" action="/account" novalidate data-account-api="/api/auth/2fa/totp/enable" hidden>
<p>Scan this code with your authenticator app, or type the key into it:</p>
<p><img id="mfa-qr" class="qr" alt="QR code of the authenticator key" width="200" height="200"></p>
<p><code id="mfa-secret" class="secret"></code></p>
<div class="field">
<label for="mfa-code">The 6-digit code the app shows</label>
<input id="mfa-code" name="code" type="text" inputmode="numeric" autocomplete="one-time-code" pattern="[0-9]{6}" maxlength="6" required>
</div>
<button type="submit" class="primary" data-busy-text="Checking…">Turn on two-factor sign-in</button>
</form>
<div id="mfa-codes" hidden>
<p><strong>Your recovery codes.</strong> Each works once, instead of a code from the app, if you lose it. Save them somewhere safe now: they are not shown again.</p>
<ul id="mfa-code-list" class="codes"></ul>
</div>
<form id="mfa-regenerate-form" method="post" action="/account" novalidate data-account-api="/api/auth/2fa/recovery-codes" hidden>
${hasPassword ? currentPasswordField('mfa-regenerate-current') : null}
<button type="submit" class="secondary" data-busy-text="Making new codes…">Make new recovery codes</button>
</form>
<form id="mfa-disable-form" method="post" action="/account" novalidate data-account-api="/api/auth/2fa/totp/disable" hidden>
${hasPassword ? currentPasswordField('mfa-disable-current') : null}
<button type="submit" class="secondary" data-busy-text="Turning off…">Turn off two-factor sign-in</button>
</form>
</section>`;
}

/** A plain link: the browser sends the session cookie and saves the answer (Content-Disposition), no script needed. */
function downloadSection(): SafeHtml {
  return html`<section class="section" aria-labelledby="download-title">
<h2 id="download-title">Your data</h2>
<p>One file with everything Gatehouse holds about you: your account, sessions, linked sign-ins, passkeys, two-factor state and your account's activity. It never holds a password, token or secret.</p>
<p><a id="download-data" class="button secondary" href="/api/auth/account/export" download>Download my data</a></p>
</section>`;
}

function deleteSection(hasPassword: boolean): SafeHtml {
  return html`<section class="section" aria-labelledby="delete-title">
<h2 id="delete-title">Delete your account</h2>
<p>This deletes your account, your sessions and your linked sign-ins at once. It cannot be undone.</p>
<form id="delete-form" method="post" action="/account" novalidate data-account-api="/api/auth/account/delete" data-confirm-word="${DELETE_CONFIRMATION}">
<div class="field">
<label for="delete-confirm">Type ${DELETE_CONFIRMATION} to confirm</label>
<input id="delete-confirm" name="confirm" type="text" autocomplete="off" required data-not-sent>
</div>
${hasPassword ? currentPasswordField('delete-current') : null}
<button type="submit" class="danger" data-busy-text="Deleting…">Delete my account</button>
</form>
</section>`;
}

export function renderConfirmEmailChangePage(ctx: PageContext, options: { token: string | null }): string {
  if (options.token === null) {
    return renderLayout({
      title: 'Confirm your new email address',
      page: 'confirm-email-change',
      devMode: ctx.devMode,
      message: { kind: 'error', text: 'This link is incomplete: it has no token. Open the link from the email again, or ask for a new one.' },
      body: html`<nav class="links" aria-label="Other actions"><p><a href="/account">Manage your account</a></p></nav>`,
    });
  }
  return renderLayout({
    title: 'Confirm your new email address',
    page: 'confirm-email-change',
    devMode: ctx.devMode,
    scripts: ['/assets/account.js'],
    body: html`<form id="confirm-email-change-form" method="post" action="/confirm-email-change" novalidate data-account-api="/api/auth/email/change/confirm">
<p>Press Confirm to move your account to this email address.</p>
<input type="hidden" name="token" value="${options.token}">
<button type="submit" class="primary" data-busy-text="Confirming…">Confirm</button>
</form>
<p id="continue" hidden><a class="button primary" href="/account">Manage your account</a></p>`,
  });
}
