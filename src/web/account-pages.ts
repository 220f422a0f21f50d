/**
 * @module The account page (DESIGN §9.2) and the email change confirmation page, rendered on the
 * server as plain HTML and driven by /assets/account.js, which fills the lists from the API and
 * sends the forms. Their forms name their endpoint in `data-account-api` (not `data-api`, which
 * app.js sends): one script owns each form. The confirmation page spends its token only on POST.
 */
import type { PublicUser } from '../users/user.js';
import { html, renderLayout, tHtml, type SafeHtml } from './html.js';
import { organizationsSection } from './organization-pages.js';
import { passwordRules, type PageContext } from './pages.js';

/** The word typed to confirm a deletion; account.js compares against the same attribute. */
const DELETE_CONFIRMATION = 'DELETE';

/** Outside any form: the list's buttons (rename, remove, unlink) read it, so it is not required for a form to submit. */
function listPasswordField(ctx: PageContext, id: string, purpose: string): SafeHtml {
  return html`<div class="field">
<label for="${id}">${ctx.t('account.currentPasswordFor', { purpose })}</label>
<input id="${id}" name="currentPassword" type="password" autocomplete="current-password">
</div>`;
}

function currentPasswordField(ctx: PageContext, id: string): SafeHtml {
  return html`<div class="field">
<label for="${id}">${ctx.t('common.currentPassword')}</label>
<input id="${id}" name="currentPassword" type="password" autocomplete="current-password" required>
</div>`;
}

function newPasswordWithRules(ctx: PageContext): SafeHtml {
  return html`<div class="field">
<label for="new-password">${ctx.t('common.newPassword')}</label>
<input id="new-password" name="newPassword" type="password" autocomplete="new-password" required aria-describedby="password-problem password-rules" data-check-rules>
<p id="password-problem" class="field-problem" data-password-problem="newPassword" hidden></p>
</div>
${passwordRules(ctx)}`;
}

export function renderAccountPage(ctx: PageContext, options: { user: PublicUser; hasPassword: boolean }): string {
  const { user, hasPassword } = options;
  return renderLayout({
    title: ctx.t('common.manageAccount'),
    page: 'account',
    ctx,
    scripts: ['/assets/account.js', '/assets/webauthn.js', '/assets/passkeys.js', '/assets/organizations.js'],
    body: html`${sessionsSection(ctx)}

${appsSection(ctx)}

${organizationsSection(ctx, user.id)}

${passwordSection(ctx, hasPassword)}

${emailSection(ctx, user, hasPassword)}

${linkedSignInsSection(ctx, hasPassword)}

${passkeysSection(ctx, hasPassword)}

${twoFactorSection(ctx, hasPassword)}

${downloadSection(ctx)}

${deleteSection(ctx, hasPassword)}

<nav class="links" aria-label="${ctx.t('common.otherActions')}"><p><a href="/dashboard">${ctx.t('account.backToAccount')}</a></p></nav>`,
  });
}

/*
 * The page's sections, in its order. Where the account has a password, each change asks for it
 * again (the server re-authenticates); an account without one has no field to fill.
 */

function sessionsSection(ctx: PageContext): SafeHtml {
  return html`<section class="section" aria-labelledby="sessions-title">
<h2 id="sessions-title">${ctx.t('account.sessionsTitle')}</h2>
<ul id="session-list" class="item-list" aria-live="polite"><li>${ctx.t('common.loading')}</li></ul>
<button type="button" id="revoke-others" class="secondary">${ctx.t('account.revokeOthers')}</button>
</section>`;
}

/** The apps signed in through Gatehouse as an OpenID Connect provider, each with its remove button; account.js fills it. */
function appsSection(ctx: PageContext): SafeHtml {
  return html`<section class="section" aria-labelledby="apps-title">
<h2 id="apps-title">${ctx.t('account.appsTitle')}</h2>
<ul id="app-list" class="item-list" aria-live="polite"><li>${ctx.t('common.loading')}</li></ul>
</section>`;
}

/** A change form when the account has a password; otherwise how to set one. */
function passwordSection(ctx: PageContext, hasPassword: boolean): SafeHtml {
  return html`<section class="section" aria-labelledby="password-title">
<h2 id="password-title">${ctx.t('common.password')}</h2>
${
  hasPassword
    ? html`<form id="password-form" method="post" action="/account" novalidate data-account-api="/api/auth/password/change">
${currentPasswordField(ctx, 'password-current')}
${newPasswordWithRules(ctx)}
<button type="submit" class="primary" data-busy-text="${ctx.t('common.saving')}">${ctx.t('account.changePassword')}</button>
</form>`
    : html`<p>${tHtml(ctx.t, 'account.noPassword', { link: html`<a href="/forgot-password">${ctx.t('common.forgotPassword')}</a>` })}</p>`
}
</section>`;
}

function emailSection(ctx: PageContext, user: PublicUser, hasPassword: boolean): SafeHtml {
  return html`<section class="section" aria-labelledby="email-title">
<h2 id="email-title">${ctx.t('common.emailAddress')}</h2>
<p>${tHtml(ctx.t, 'account.emailNow', { email: html`<strong id="current-email">${user.email ?? ctx.t('account.emailNone')}</strong>` })}</p>
<form id="email-form" method="post" action="/account" novalidate data-account-api="/api/auth/email/change">
<div class="field">
<label for="new-email">${ctx.t('account.newEmail')}</label>
<input id="new-email" name="newEmail" type="email" autocomplete="email" required>
</div>
${hasPassword ? currentPasswordField(ctx, 'email-current') : null}
<button type="submit" class="primary" data-busy-text="${ctx.t('common.sending')}">${ctx.t('account.emailSubmit')}</button>
</form>
${ctx.devMode ? html`<div id="dev-link" class="dev-link" hidden><p><strong>${ctx.t('common.devMode')}</strong> <a id="dev-link-anchor" href="#"></a></p></div>` : null}
</section>`;
}

function linkedSignInsSection(ctx: PageContext, hasPassword: boolean): SafeHtml {
  return html`<section class="section" aria-labelledby="linked-title">
<h2 id="linked-title">${ctx.t('account.linkedTitle')}</h2>
<ul id="linked-list" class="item-list" aria-live="polite"><li>${ctx.t('common.loading')}</li></ul>
${hasPassword ? listPasswordField(ctx, 'linked-current', ctx.t('account.purposeUnlink')) : null}
</section>`;
}

/** The list, and the add form account.js shows when the browser can create passkeys. */
function passkeysSection(ctx: PageContext, hasPassword: boolean): SafeHtml {
  return html`<section class="section" aria-labelledby="passkeys-title">
<h2 id="passkeys-title">${ctx.t('account.passkeysTitle')}</h2>
<p>${ctx.t('account.passkeysIntro')}</p>
<ul id="passkey-list" class="item-list" aria-live="polite"><li>${ctx.t('common.loading')}</li></ul>
${hasPassword ? listPasswordField(ctx, 'passkey-manage-current', ctx.t('account.purposePasskey')) : null}
<p id="passkey-unsupported" hidden>${ctx.t('account.passkeysUnsupported')}</p>
<form id="passkey-add-form" method="post" action="/account" novalidate data-passkey-api="/api/auth/passkeys/register/options" hidden>
<div class="field">
<label for="passkey-name">${ctx.t('account.passkeyName')}</label>
<input id="passkey-name" name="name" type="text" maxlength="64" autocomplete="off" placeholder="${ctx.t('account.passkeyNamePlaceholder')}">
</div>
${hasPassword ? currentPasswordField(ctx, 'passkey-current') : null}
<button type="submit" class="primary" data-busy-text="${ctx.t('common.waitingForPasskey')}">${ctx.t('account.passkeyAdd')}</button>
</form>
</section>`;
}

/** Every step's form is hidden: account.js shows the ones that fit the account's state (off, being set up, on). */
function twoFactorSection(ctx: PageContext, hasPassword: boolean): SafeHtml {
  return html`<section class="section" aria-labelledby="mfa-title">
<h2 id="mfa-title">${ctx.t('account.mfaTitle')}</h2>
<p id="mfa-status">${ctx.t('common.loading')}</p>
<form id="mfa-setup-form" method="post" action="/account" novalidate data-account-api="/api/auth/2fa/totp/setup" hidden>
<p>${ctx.t('account.mfaSetupIntro')}</p>
${hasPassword ? currentPasswordField(ctx, 'mfa-setup-current') : null}
<button type="submit" class="primary" data-busy-text="${ctx.t('account.mfaPreparing')}">${ctx.t('account.mfaSetup')}</button>
</form>
<form id="mfa-enable-form" method="post" action="/account" novalidate data-account-api="/api/auth/2fa/totp/enable" hidden>
<p>${ctx.t('account.mfaScan')}</p>
<p><img id="mfa-qr" class="qr" alt="${ctx.t('account.mfaQrAlt')}" width="200" height="200"></p>
<p><code id="mfa-secret" class="secret"></code></p>
<div class="field">
<label for="mfa-code">${ctx.t('account.mfaCode')}</label>
<input id="mfa-code" name="code" type="text" inputmode="numeric" autocomplete="one-time-code" pattern="[0-9]{6}" maxlength="6" required>
</div>
<button type="submit" class="primary" data-busy-text="${ctx.t('common.checking')}">${ctx.t('account.mfaEnable')}</button>
</form>
<div id="mfa-codes" hidden>
<p><strong>${ctx.t('account.recoveryCodesTitle')}</strong> ${ctx.t('account.recoveryCodesText')}</p>
<ul id="mfa-code-list" class="codes"></ul>
</div>
<form id="mfa-regenerate-form" method="post" action="/account" novalidate data-account-api="/api/auth/2fa/recovery-codes" hidden>
${hasPassword ? currentPasswordField(ctx, 'mfa-regenerate-current') : null}
<button type="submit" class="secondary" data-busy-text="${ctx.t('account.mfaRegenerating')}">${ctx.t('account.mfaRegenerate')}</button>
</form>
<form id="mfa-disable-form" method="post" action="/account" novalidate data-account-api="/api/auth/2fa/totp/disable" hidden>
${hasPassword ? currentPasswordField(ctx, 'mfa-disable-current') : null}
<button type="submit" class="secondary" data-busy-text="${ctx.t('account.mfaTurningOff')}">${ctx.t('account.mfaDisable')}</button>
</form>
</section>`;
}

/** A plain link: the browser sends the session cookie and saves the answer (Content-Disposition), no script needed. */
function downloadSection(ctx: PageContext): SafeHtml {
  return html`<section class="section" aria-labelledby="download-title">
<h2 id="download-title">${ctx.t('account.downloadTitle')}</h2>
<p>${ctx.t('account.downloadIntro', { appName: ctx.appName })}</p>
<p><a id="download-data" class="button secondary" href="/api/auth/account/export" download>${ctx.t('account.download')}</a></p>
</section>`;
}

function deleteSection(ctx: PageContext, hasPassword: boolean): SafeHtml {
  return html`<section class="section" aria-labelledby="delete-title">
<h2 id="delete-title">${ctx.t('account.deleteTitle')}</h2>
<p>${ctx.t('account.deleteIntro')}</p>
<form id="delete-form" method="post" action="/account" novalidate data-account-api="/api/auth/account/delete" data-confirm-word="${DELETE_CONFIRMATION}">
<div class="field">
<label for="delete-confirm">${ctx.t('account.deleteConfirm', { word: DELETE_CONFIRMATION })}</label>
<input id="delete-confirm" name="confirm" type="text" autocomplete="off" required data-not-sent>
</div>
${hasPassword ? currentPasswordField(ctx, 'delete-current') : null}
<button type="submit" class="danger" data-busy-text="${ctx.t('common.deleting')}">${ctx.t('account.deleteSubmit')}</button>
</form>
</section>`;
}

export function renderConfirmEmailChangePage(ctx: PageContext, options: { token: string | null }): string {
  if (options.token === null) {
    return renderLayout({
      title: ctx.t('confirmEmailChange.title'),
      page: 'confirm-email-change',
      ctx,
      message: { kind: 'error', text: ctx.t('common.missingToken') },
      body: html`<nav class="links" aria-label="${ctx.t('common.otherActions')}"><p><a href="/account">${ctx.t('common.manageAccount')}</a></p></nav>`,
    });
  }
  return renderLayout({
    title: ctx.t('confirmEmailChange.title'),
    page: 'confirm-email-change',
    ctx,
    scripts: ['/assets/account.js'],
    body: html`<form id="confirm-email-change-form" method="post" action="/confirm-email-change" novalidate data-account-api="/api/auth/email/change/confirm">
<p>${ctx.t('confirmEmailChange.intro')}</p>
<input type="hidden" name="token" value="${options.token}">
<button type="submit" class="primary" data-busy-text="${ctx.t('common.confirming')}">${ctx.t('common.confirm')}</button>
</form>
<p id="continue" hidden><a class="button primary" href="/account">${ctx.t('common.manageAccount')}</a></p>`,
  });
}
