/**
 * @module The pages people sign in with (DESIGN §7), rendered on the server as plain HTML. Forms
 * are sent by /assets/app.js to the JSON API with fetch; each form names its endpoint in
 * `data-api`. No page spends a token on GET: /verify-email and /reset-password only show a form
 * whose POST does, so a mail scanner that fetches a link changes nothing.
 */
import { PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH } from '../credentials/rules.js';
import type { VerificationLinkDescription } from '../email-verification/flow.js';
import type { PublicUser } from '../users/user.js';
import { html, renderLayout, tHtml, type PageContext, type SafeHtml } from './html.js';

export type { PageContext } from './html.js';

/** The spec's rules, in the order the register and reset pages list them; app.js checks each id. */
function passwordRuleList(ctx: PageContext): readonly { id: string; text: string }[] {
  const { t } = ctx;
  return [
    { id: 'length', text: t('rules.length', { min: PASSWORD_MIN_LENGTH, max: PASSWORD_MAX_LENGTH }) },
    { id: 'upper', text: t('rules.upper') },
    { id: 'lower', text: t('rules.lower') },
    { id: 'digit', text: t('rules.digit') },
    { id: 'special', text: t('rules.special') },
  ];
}

/** The rules list app.js marks as the person types into an input with `data-check-rules`. */
export function passwordRules(ctx: PageContext): SafeHtml {
  return html`<div class="rules" id="password-rules">
<p id="password-rules-title">${ctx.t('rules.title')}</p>
<ul aria-labelledby="password-rules-title">
${passwordRuleList(ctx).map(
  (rule) =>
    html`<li class="rule" data-rule="${rule.id}" data-min="${PASSWORD_MIN_LENGTH}" data-max="${PASSWORD_MAX_LENGTH}">${rule.text}<span class="visually-hidden rule-state"> ${ctx.t('rules.notYet')}</span></li>\n`,
)}</ul>
</div>`;
}

function newPasswordField(ctx: PageContext, label: string): SafeHtml {
  return html`<div class="field">
<label for="password">${label}</label>
<input id="password" name="password" type="password" autocomplete="new-password" required aria-describedby="password-problem password-rules" data-check-rules>
<p id="password-problem" class="field-problem" data-password-problem="password" hidden></p>
<div class="show-password"><input id="show-password" type="checkbox" data-show-password="password"><label for="show-password">${ctx.t('common.showPassword')}</label></div>
</div>
${passwordRules(ctx)}`;
}

/** A region that app.js fills with the development-mode link; hidden until then. */
function devLinkArea(ctx: PageContext): SafeHtml | null {
  return ctx.devMode
    ? html`<div id="dev-link" class="dev-link" hidden><p><strong>${ctx.t('common.devMode')}</strong> ${ctx.t('common.devModeNoEmail')} <a id="dev-link-anchor" href="#"></a></p></div>`
    : null;
}

export interface LoginPageOptions {
  returnTo: string;
  /** The usable sign-in providers, each with its start address (return_to included); empty: no buttons. */
  providers: readonly { id: string; name: string; startUrl: string }[];
  message?: { kind: 'error' | 'success'; text: string } | undefined;
  /** A provider sign-in of a 2FA account landed here (`?mfa=required`): the code step shows first. */
  secondFactor?: boolean;
  /** The address to fill in: an app's `login_hint` (OpenID Connect), passed on as `?login_hint=`. */
  emailHint?: string | undefined;
  /** `?return_to=…&login_hint=…` for the link to /register (empty: the page was opened without them). */
  otherPageQuery?: string;
}

/**
 * One email field for every way in: the password form's (in #first-factor). The other ways
 * (#other-ways: by email, passkey, providers) follow it, and hide with it for the code step. The
 * sign-in link and the code from its email send that same address (their forms carry it in a
 * hidden input, which app.js fills from `data-email-from` when they are sent), so a person types
 * their address once, whichever way they choose; the passkey needs no address at all.
 */
export function renderLoginPage(ctx: PageContext, options: LoginPageOptions): string {
  return renderLayout({
    title: ctx.t('common.signIn'),
    page: 'login',
    ctx,
    message: options.message,
    // Passkeys: the browser build of @simplewebauthn/browser, then the page's use of it.
    scripts: ['/assets/webauthn.js', '/assets/passkeys.js'],
    body: html`<div id="first-factor"${options.secondFactor ? html` hidden` : null}>
<form method="post" action="/login" novalidate data-api="/api/auth/login" data-return-to="${options.returnTo}">
<div class="field">
<label for="email">${ctx.t('common.emailAddress')}</label>
<input id="email" name="email" type="email" autocomplete="username webauthn" inputmode="email" required autofocus${options.emailHint === undefined ? null : html` value="${options.emailHint}"`}>
</div>
<div class="field">
<label for="password">${ctx.t('common.password')}</label>
<input id="password" name="password" type="password" autocomplete="current-password" required>
</div>
<button type="submit" class="primary" data-busy-text="${ctx.t('common.signingIn')}">${ctx.t('common.signIn')}</button>
</form>
</div>
<div id="other-ways"${options.secondFactor ? html` hidden` : null}>
${emailSignIn(ctx, options.returnTo)}
<div id="passkey-login" class="passkey-login" hidden>
<p class="or">${ctx.t('login.or')}</p>
<p><button type="button" id="passkey-button" class="secondary" data-return-to="${options.returnTo}" data-busy-text="${ctx.t('common.waitingForPasskey')}">${ctx.t('login.passkey')}</button></p>
</div>
${
  options.providers.length === 0
    ? null
    : html`<p class="or">${ctx.t('login.or')}</p>
<div class="providers">
${options.providers.map(
  (provider) =>
    html`<p><a class="button secondary" id="${provider.id}-sign-in" href="${provider.startUrl}">${ctx.t('login.provider', { provider: provider.name })}</a></p>\n`,
)}</div>`
}
</div>
<form id="mfa-form" method="post" action="/login" novalidate data-api="/api/auth/2fa/verify" data-return-to="${options.returnTo}"${options.secondFactor ? null : html` hidden`}>
<p>${ctx.t('login.mfaIntro')}</p>
<div class="field">
<label for="mfa-code">${ctx.t('common.code')}</label>
<input id="mfa-code" name="code" type="text" autocomplete="one-time-code" autocapitalize="off" spellcheck="false" maxlength="20" required${options.secondFactor ? html` autofocus` : null}>
</div>
<button type="submit" class="primary" data-busy-text="${ctx.t('common.checking')}">${ctx.t('common.continue')}</button>
</form>
<nav class="links" aria-label="${ctx.t('common.otherActions')}">
<p><a href="/forgot-password">${ctx.t('common.forgotPassword')}</a></p>
<p>${ctx.t('login.newHere')} <a href="/register${options.otherPageQuery ?? ''}">${ctx.t('register.title')}</a></p>
</nav>`,
  });
}

/** Sign-in by email with the address typed above: the link, and the code of its email (folded away until the link is sent). */
function emailSignIn(ctx: PageContext, returnTo: string): SafeHtml {
  return html`<section id="by-email" class="by-email" aria-labelledby="by-email-title">
<p class="or" id="by-email-title">${ctx.t('login.byEmailTitle')}</p>
<form id="email-link-form" method="post" action="/login" novalidate data-api="/api/auth/email-sign-in/request" data-email-from="email">
<input type="hidden" name="return_to" value="${returnTo}">
<input type="hidden" id="email-link-email" name="email">
<button type="submit" class="secondary" data-busy-text="${ctx.t('common.sending')}">${ctx.t('login.emailLink')}</button>
</form>
${devLinkArea(ctx)}
<details id="email-code-step">
<summary>${ctx.t('login.codeIntro')}</summary>
<form id="email-code-form" method="post" action="/login" novalidate data-api="/api/auth/email-sign-in/verify" data-return-to="${returnTo}" data-email-from="email">
<input type="hidden" id="email-code-email" name="email">
<div class="field">
<label for="email-code">${ctx.t('login.codeLabel')}</label>
<input id="email-code" name="code" type="text" autocomplete="one-time-code" inputmode="numeric" autocapitalize="off" spellcheck="false" maxlength="20" required>
</div>
<button type="submit" class="secondary" data-busy-text="${ctx.t('common.checking')}">${ctx.t('login.codeSubmit')}</button>
</form>
</details>
</section>`;
}

export function renderRegisterPage(ctx: PageContext, options: { returnTo: string; emailHint?: string | undefined; otherPageQuery?: string }): string {
  return renderLayout({
    title: ctx.t('register.title'),
    page: 'register',
    ctx,
    body: html`<form method="post" action="/register" novalidate data-api="/api/auth/register" data-return-to="${options.returnTo}">
<div class="field">
<label for="email">${ctx.t('common.emailAddress')}</label>
<input id="email" name="email" type="email" autocomplete="email" inputmode="email" required autofocus${options.emailHint === undefined ? null : html` value="${options.emailHint}"`}>
</div>
${newPasswordField(ctx, ctx.t('common.password'))}
<button type="submit" class="primary" data-busy-text="${ctx.t('register.busy')}">${ctx.t('register.submit')}</button>
</form>
${devLinkArea(ctx)}
<p id="continue" hidden><a class="button primary" href="${options.returnTo}">${ctx.t('common.continue')}</a></p>
<nav class="links" aria-label="${ctx.t('common.otherActions')}">
<p>${ctx.t('register.haveAccount')} <a href="/login${options.otherPageQuery ?? ''}">${ctx.t('common.signIn')}</a></p>
</nav>`,
  });
}

export function renderForgotPasswordPage(ctx: PageContext): string {
  return renderLayout({
    title: ctx.t('forgot.title'),
    page: 'forgot-password',
    ctx,
    body: html`<p>${ctx.t('forgot.intro')}</p>
<form method="post" action="/forgot-password" novalidate data-api="/api/auth/password-reset/request">
<div class="field">
<label for="email">${ctx.t('common.emailAddress')}</label>
<input id="email" name="email" type="email" autocomplete="email" inputmode="email" required autofocus>
</div>
<button type="submit" class="primary" data-busy-text="${ctx.t('common.sending')}">${ctx.t('forgot.submit')}</button>
</form>
${devLinkArea(ctx)}
<nav class="links" aria-label="${ctx.t('common.otherActions')}">
<p><a href="/login">${ctx.t('common.backToSignIn')}</a></p>
</nav>`,
  });
}

export function renderResetPasswordPage(ctx: PageContext, options: { token: string | null }): string {
  if (options.token === null) {
    return renderLayout({
      title: ctx.t('reset.title'),
      page: 'reset-password',
      ctx,
      message: { kind: 'error', text: ctx.t('common.missingToken') },
      body: html`<nav class="links" aria-label="${ctx.t('common.otherActions')}"><p><a href="/forgot-password">${ctx.t('common.askNewLink')}</a></p></nav>`,
    });
  }
  return renderLayout({
    title: ctx.t('reset.title'),
    page: 'reset-password',
    ctx,
    body: html`<form method="post" action="/reset-password" novalidate data-api="/api/auth/password-reset/confirm">
<input type="hidden" name="token" value="${options.token}">
${newPasswordField(ctx, ctx.t('common.newPassword'))}
<button type="submit" class="primary" data-busy-text="${ctx.t('common.saving')}">${ctx.t('reset.submit')}</button>
</form>
<p id="continue" hidden><a class="button primary" href="/login">${ctx.t('common.signIn')}</a></p>
<nav class="links" aria-label="${ctx.t('common.otherActions')}">
<p><a href="/forgot-password">${ctx.t('common.askNewLink')}</a></p>
</nav>`,
  });
}

/** `ana@example.com` → `a…@example.com`: enough for its owner to recognise, little for anyone who sees the screen. */
export function maskEmail(email: string): string {
  const at = email.lastIndexOf('@');
  if (at <= 0) return '…';
  return `${email.slice(0, 1)}…${email.slice(at)}`;
}

/** When and from where an account was registered, in words the owner can check against their own memory. */
function registrationWords(ctx: PageContext, link: VerificationLinkDescription): string {
  const { t } = ctx;
  // The date and time as the page's language writes them, in UTC and said so: the server does not
  // know the reader's time zone. The catalog message places it (`{{when}}`).
  const when = `${new Intl.DateTimeFormat(ctx.lang, { dateStyle: 'long', timeStyle: 'short', timeZone: 'UTC' }).format(link.createdAt)} UTC`;
  const ip = link.createdFrom?.ip ?? null;
  const agent = link.createdFrom?.userAgent?.slice(0, 120) ?? null;
  if (ip !== null && agent !== null) return t('verify.createdFromBoth', { when, ip, agent });
  if (ip !== null) return t('verify.createdFromIp', { when, ip });
  if (agent !== null) return t('verify.createdFromAgent', { when, agent });
  return t('verify.created', { when });
}

export function renderVerifyEmailPage(ctx: PageContext, options: { token: string | null; link: VerificationLinkDescription | null }): string {
  if (options.token === null) {
    return renderLayout({
      title: ctx.t('verify.title'),
      page: 'verify-email',
      ctx,
      message: { kind: 'error', text: ctx.t('common.missingToken') },
      body: html`<nav class="links" aria-label="${ctx.t('common.otherActions')}"><p><a href="/dashboard">${ctx.t('common.goToAccount')}</a></p></nav>`,
    });
  }
  return renderLayout({
    title: ctx.t('verify.title'),
    page: 'verify-email',
    ctx,
    body: html`${
      options.link === null ? '' : html`<p id="registration">${registrationWords(ctx, options.link)} ${ctx.t('verify.notYou')}</p>`
    }<form method="post" action="/verify-email" novalidate data-api="/api/auth/verify-email">
<p>${ctx.t('verify.intro')}</p>
<input type="hidden" name="token" value="${options.token}">
<button type="submit" class="primary" data-busy-text="${ctx.t('common.confirming')}">${ctx.t('common.confirm')}</button>
</form>
<details id="decline">
<summary>${ctx.t('verify.declineSummary')}</summary>
<form id="decline-form" method="post" action="/verify-email" novalidate data-api="/api/auth/verify-email/decline">
<p>${ctx.t('verify.declineText')}</p>
<input type="hidden" name="token" value="${options.token}">
<button type="submit" class="danger" data-busy-text="${ctx.t('common.deleting')}">${ctx.t('verify.declineSubmit')}</button>
</form>
</details>
<p id="continue" hidden><a class="button primary" href="/dashboard">${ctx.t('common.goToAccount')}</a></p>`,
  });
}

/** The link of a sign-in by email: only the Confirm button's POST spends it (link scanners spend nothing). */
export function renderEmailSignInPage(ctx: PageContext, options: { token: string | null; email: string | null }): string {
  if (options.token === null) {
    return renderLayout({
      title: ctx.t('common.signIn'),
      page: 'email-sign-in',
      ctx,
      message: { kind: 'error', text: ctx.t('common.missingToken') },
      body: html`<nav class="links" aria-label="${ctx.t('common.otherActions')}"><p><a href="/login">${ctx.t('common.askNewLink')}</a></p></nav>`,
    });
  }
  return renderLayout({
    title: ctx.t('common.signIn'),
    page: 'email-sign-in',
    ctx,
    body: html`<form method="post" action="/email-sign-in" novalidate data-api="/api/auth/email-sign-in/verify">
<p id="sign-in-account">${
      options.email === null ? ctx.t('emailSignIn.intro') : tHtml(ctx.t, 'emailSignIn.signInAs', { email: html`<strong>${maskEmail(options.email)}</strong>` })
    }</p>
<input type="hidden" name="token" value="${options.token}">
<button type="submit" class="primary" data-busy-text="${ctx.t('common.signingIn')}">${options.email === null ? ctx.t('common.confirm') : ctx.t('emailSignIn.submitAs', { email: maskEmail(options.email) })}</button>
</form>
<nav class="links" aria-label="${ctx.t('common.otherActions')}">
<p><a href="/login">${ctx.t('common.backToSignIn')}</a></p>
</nav>`,
  });
}

export function renderDashboardPage(ctx: PageContext, options: { user: PublicUser }): string {
  const { user } = options;
  return renderLayout({
    title: ctx.t('dashboard.title'),
    page: 'dashboard',
    ctx,
    body: html`<dl class="account">
<dt>${ctx.t('dashboard.signedInAs')}</dt>
<dd id="account-email" dir="auto">${user.email ?? ctx.t('dashboard.noEmail')}</dd>
<dt>${ctx.t('common.emailAddress')}</dt>
<dd><span id="verification-status" class="status status--${user.emailVerified ? 'verified' : 'unverified'}">${user.email === null ? ctx.t('dashboard.noneToVerify') : user.emailVerified ? ctx.t('dashboard.verified') : ctx.t('dashboard.notVerified')}</span></dd>
</dl>
<p>${tHtml(ctx.t, 'dashboard.manage', { link: html`<a href="/account">${ctx.t('common.manageAccount')}</a>` })}</p>
${
  user.email !== null && !user.emailVerified
    ? html`<p>${ctx.t('dashboard.checkInbox')}</p>
<form method="post" action="/dashboard" novalidate data-api="/api/auth/resend-verification" id="resend-form">
<button type="submit" class="secondary" data-busy-text="${ctx.t('common.sending')}">${ctx.t('dashboard.resend')}</button>
</form>
${devLinkArea(ctx)}`
    : null
}
<form method="post" action="/dashboard" novalidate data-api="/api/auth/logout" id="sign-out-form">
<button type="submit" class="primary" data-busy-text="${ctx.t('common.signingOut')}">${ctx.t('common.signOut')}</button>
</form>`,
  });
}

/** What a form post without JavaScript reaches: the pages need the script to call the API. */
export function renderNoScriptPage(ctx: PageContext): string {
  return renderLayout({
    title: ctx.t('noScript.title'),
    page: 'no-script',
    ctx,
    message: { kind: 'error', text: ctx.t('noScript.message') },
    body: html`<nav class="links" aria-label="${ctx.t('common.otherActions')}"><p><a href="/login">${ctx.t('common.backToSignIn')}</a></p></nav>`,
  });
}
