/**
 * @module The pages people sign in with (DESIGN §7), rendered on the server as plain HTML. Forms
 * are sent by /assets/app.js to the JSON API with fetch; each form names its endpoint in
 * `data-api`. No page spends a token on GET: /verify-email and /reset-password only show a form
 * whose POST does, so a mail scanner that fetches a link changes nothing.
 */
import { PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH } from '../credentials/rules.js';
import type { VerificationLinkDescription } from '../email-verification/flow.js';
import type { PublicUser } from '../users/user.js';
import { html, renderLayout, type SafeHtml } from './html.js';

export interface PageContext {
  devMode: boolean;
}

/** The spec's rules, in the order the register and reset pages list them; app.js checks each id. */
const PASSWORD_RULES: readonly { id: string; text: string }[] = [
  { id: 'length', text: `${PASSWORD_MIN_LENGTH} to ${PASSWORD_MAX_LENGTH} characters` },
  { id: 'upper', text: 'an uppercase letter' },
  { id: 'lower', text: 'a lowercase letter' },
  { id: 'digit', text: 'a digit' },
  { id: 'special', text: 'a special character, such as ! ? - or a space' },
];

/** The rules list app.js marks as the person types into an input with `data-check-rules`. */
export function passwordRules(): SafeHtml {
  return html`<div class="rules" id="password-rules">
<p id="password-rules-title">Your password needs:</p>
<ul aria-labelledby="password-rules-title">
${PASSWORD_RULES.map(
  (rule) =>
    html`<li class="rule" data-rule="${rule.id}" data-min="${PASSWORD_MIN_LENGTH}" data-max="${PASSWORD_MAX_LENGTH}">${rule.text}<span class="visually-hidden rule-state"> (not yet)</span></li>\n`,
)}</ul>
</div>`;
}

function newPasswordField(label: string): SafeHtml {
  return html`<div class="field">
<label for="password">${label}</label>
<input id="password" name="password" type="password" autocomplete="new-password" required aria-describedby="password-rules" data-check-rules>
<div class="show-password"><input id="show-password" type="checkbox" data-show-password="password"><label for="show-password">Show password</label></div>
</div>
${passwordRules()}`;
}

/** A region that app.js fills with the development-mode link; hidden until then. */
function devLinkArea(ctx: PageContext): SafeHtml | null {
  return ctx.devMode
    ? html`<div id="dev-link" class="dev-link" hidden><p><strong>Development mode:</strong> no email is needed. <a id="dev-link-anchor" href="#"></a></p></div>`
    : null;
}

export interface LoginPageOptions {
  returnTo: string;
  /** The usable sign-in providers, each with its start address (return_to included); empty: no buttons. */
  providers: readonly { id: string; name: string; startUrl: string }[];
  message?: { kind: 'error' | 'success'; text: string } | undefined;
  /** A provider sign-in of a 2FA account landed here (`?mfa=required`): the code step shows first. */
  secondFactor?: boolean;
}

export function renderLoginPage(ctx: PageContext, options: LoginPageOptions): string {
  return renderLayout({
    title: 'Sign in',
    page: 'login',
    devMode: ctx.devMode,
    message: options.message,
    // Passkeys: the browser build of @simplewebauthn/browser, then the page's use of it.
    scripts: ['/assets/webauthn.js', '/assets/passkeys.js'],
    body: html`<div id="first-factor"${options.secondFactor ? html` hidden` : null}>
<form method="post" action="/login" novalidate data-api="/api/auth/login" data-return-to="${options.returnTo}">
<div class="field">
<label for="email">Email address</label>
<input id="email" name="email" type="email" autocomplete="username webauthn" inputmode="email" required autofocus>
</div>
<div class="field">
<label for="password">Password</label>
<input id="password" name="password" type="password" autocomplete="current-password" required>
</div>
<button type="submit" class="primary" data-busy-text="Signing in…">Sign in</button>
</form>
<div id="passkey-login" class="passkey-login" hidden>
<p class="or">or</p>
<p><button type="button" id="passkey-button" class="secondary" data-return-to="${options.returnTo}" data-busy-text="Waiting for your passkey…">Sign in with a passkey</button></p>
</div>
${
  options.providers.length === 0
    ? null
    : html`<p class="or">or</p>
<div class="providers">
${options.providers.map(
  (provider) => html`<p><a class="button secondary" id="${provider.id}-sign-in" href="${provider.startUrl}">Sign in with ${provider.name}</a></p>\n`,
)}</div>`
}
</div>
<section id="by-email" class="by-email" aria-labelledby="by-email-title"${options.secondFactor ? html` hidden` : null}>
<h2 id="by-email-title">No password? Sign in by email</h2>
<form id="email-link-form" method="post" action="/login" novalidate data-api="/api/auth/email-sign-in/request">
<input type="hidden" name="return_to" value="${options.returnTo}">
<div class="field">
<label for="email-link-email">Email address</label>
<input id="email-link-email" name="email" type="email" autocomplete="email" inputmode="email" required>
</div>
<button type="submit" class="secondary" data-busy-text="Sending…">Email me a sign-in link</button>
</form>
${devLinkArea(ctx)}
<form id="email-code-form" method="post" action="/login" novalidate data-api="/api/auth/email-sign-in/verify" data-return-to="${options.returnTo}">
<p>Got the email on another device? Enter the 6-digit code it gives.</p>
<div class="field">
<label for="email-code-email">Email address</label>
<input id="email-code-email" name="email" type="email" autocomplete="email" inputmode="email" required>
</div>
<div class="field">
<label for="email-code">Code from the email</label>
<input id="email-code" name="code" type="text" autocomplete="one-time-code" inputmode="numeric" autocapitalize="off" spellcheck="false" maxlength="20" required>
</div>
<button type="submit" class="secondary" data-busy-text="Checking…">Sign in with the code</button>
</form>
</section>
<form id="mfa-form" method="post" action="/login" novalidate data-api="/api/auth/2fa/verify" data-return-to="${options.returnTo}"${options.secondFactor ? null : html` hidden`}>
<p>Your account asks for a second step. Enter the 6-digit code your authenticator app shows, or one of your recovery codes.</p>
<div class="field">
<label for="mfa-code">Code</label>
<input id="mfa-code" name="code" type="text" autocomplete="one-time-code" autocapitalize="off" spellcheck="false" maxlength="20" required${options.secondFactor ? html` autofocus` : null}>
</div>
<button type="submit" class="primary" data-busy-text="Checking…">Continue</button>
</form>
<nav class="links" aria-label="Other actions">
<p><a href="/forgot-password">Forgot your password?</a></p>
<p>New here? <a href="/register">Create an account</a></p>
</nav>`,
  });
}

export function renderRegisterPage(ctx: PageContext, options: { returnTo: string }): string {
  return renderLayout({
    title: 'Create an account',
    page: 'register',
    devMode: ctx.devMode,
    body: html`<form method="post" action="/register" novalidate data-api="/api/auth/register" data-return-to="${options.returnTo}">
<div class="field">
<label for="email">Email address</label>
<input id="email" name="email" type="email" autocomplete="email" inputmode="email" required autofocus>
</div>
${newPasswordField('Password')}
<button type="submit" class="primary" data-busy-text="Creating your account…">Create account</button>
</form>
${devLinkArea(ctx)}
<p id="continue" hidden><a class="button primary" href="${options.returnTo}">Continue</a></p>
<nav class="links" aria-label="Other actions">
<p>Already have an account? <a href="/login">Sign in</a></p>
</nav>`,
  });
}

export function renderForgotPasswordPage(ctx: PageContext): string {
  return renderLayout({
    title: 'Reset your password',
    page: 'forgot-password',
    devMode: ctx.devMode,
    body: html`<p>Enter the email address of your account. We will send it a link to choose a new password.</p>
<form method="post" action="/forgot-password" novalidate data-api="/api/auth/password-reset/request">
<div class="field">
<label for="email">Email address</label>
<input id="email" name="email" type="email" autocomplete="email" inputmode="email" required autofocus>
</div>
<button type="submit" class="primary" data-busy-text="Sending…">Send the link</button>
</form>
${devLinkArea(ctx)}
<nav class="links" aria-label="Other actions">
<p><a href="/login">Back to sign in</a></p>
</nav>`,
  });
}

const MISSING_TOKEN_TEXT = 'This link is incomplete: it has no token. Open the link from the email again, or ask for a new one.';

export function renderResetPasswordPage(ctx: PageContext, options: { token: string | null }): string {
  if (options.token === null) {
    return renderLayout({
      title: 'Choose a new password',
      page: 'reset-password',
      devMode: ctx.devMode,
      message: { kind: 'error', text: MISSING_TOKEN_TEXT },
      body: html`<nav class="links" aria-label="Other actions"><p><a href="/forgot-password">Ask for a new link</a></p></nav>`,
    });
  }
  return renderLayout({
    title: 'Choose a new password',
    page: 'reset-password',
    devMode: ctx.devMode,
    body: html`<form method="post" action="/reset-password" novalidate data-api="/api/auth/password-reset/confirm">
<input type="hidden" name="token" value="${options.token}">
${newPasswordField('New password')}
<button type="submit" class="primary" data-busy-text="Saving…">Save the new password</button>
</form>
<p id="continue" hidden><a class="button primary" href="/login">Sign in</a></p>
<nav class="links" aria-label="Other actions">
<p><a href="/forgot-password">Ask for a new link</a></p>
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
function registrationWords(link: VerificationLinkDescription): string {
  const when = `${link.createdAt.toISOString().slice(0, 16).replace('T', ' ')} UTC`;
  if (link.createdFrom === null) return `This account was created on ${when}.`;
  const from = [
    link.createdFrom.ip === null ? null : `the address ${link.createdFrom.ip}`,
    link.createdFrom.userAgent === null ? null : `with “${link.createdFrom.userAgent.slice(0, 120)}”`,
  ]
    .filter((part) => part !== null)
    .join(', ');
  return from === '' ? `This account was created on ${when}.` : `This account was created on ${when}, from ${from}.`;
}

export function renderVerifyEmailPage(ctx: PageContext, options: { token: string | null; link: VerificationLinkDescription | null }): string {
  if (options.token === null) {
    return renderLayout({
      title: 'Confirm your email address',
      page: 'verify-email',
      devMode: ctx.devMode,
      message: { kind: 'error', text: MISSING_TOKEN_TEXT },
      body: html`<nav class="links" aria-label="Other actions"><p><a href="/dashboard">Go to your account</a></p></nav>`,
    });
  }
  return renderLayout({
    title: 'Confirm your email address',
    page: 'verify-email',
    devMode: ctx.devMode,
    body: html`${
      options.link === null
        ? ''
        : html`<p id="registration">${registrationWords(options.link)} If that was not you, someone else registered your address: choose “I did not create this account” below.</p>`
    }<form method="post" action="/verify-email" novalidate data-api="/api/auth/verify-email">
<p>Press Confirm to finish verifying your email address.</p>
<input type="hidden" name="token" value="${options.token}">
<button type="submit" class="primary" data-busy-text="Confirming…">Confirm</button>
</form>
<details id="decline">
<summary>I did not create this account</summary>
<form id="decline-form" method="post" action="/verify-email" novalidate data-api="/api/auth/verify-email/decline">
<p>Then someone else did, with a password of their own. Deleting it removes the account and everything set up with it, and cannot be undone. If you did create it, close this and press Confirm instead.</p>
<input type="hidden" name="token" value="${options.token}">
<button type="submit" class="danger" data-busy-text="Deleting…">Yes, delete this account</button>
</form>
</details>
<p id="continue" hidden><a class="button primary" href="/dashboard">Go to your account</a></p>`,
  });
}

/** The link of a sign-in by email: only the Confirm button's POST spends it (link scanners spend nothing). */
export function renderEmailSignInPage(ctx: PageContext, options: { token: string | null; email: string | null }): string {
  if (options.token === null) {
    return renderLayout({
      title: 'Sign in',
      page: 'email-sign-in',
      devMode: ctx.devMode,
      message: { kind: 'error', text: MISSING_TOKEN_TEXT },
      body: html`<nav class="links" aria-label="Other actions"><p><a href="/login">Ask for a new link</a></p></nav>`,
    });
  }
  return renderLayout({
    title: 'Sign in',
    page: 'email-sign-in',
    devMode: ctx.devMode,
    body: html`<form method="post" action="/email-sign-in" novalidate data-api="/api/auth/email-sign-in/verify">
<p id="sign-in-account">${
      options.email === null
        ? 'Press Confirm to finish signing in.'
        : html`Sign in as <strong>${maskEmail(options.email)}</strong>. If that is not your address, do not confirm: someone may have sent you their link.`
    }</p>
<input type="hidden" name="token" value="${options.token}">
<button type="submit" class="primary" data-busy-text="Signing in…">${options.email === null ? 'Confirm' : `Sign in as ${maskEmail(options.email)}`}</button>
</form>
<nav class="links" aria-label="Other actions">
<p><a href="/login">Back to sign in</a></p>
</nav>`,
  });
}

export function renderDashboardPage(ctx: PageContext, options: { user: PublicUser }): string {
  const { user } = options;
  return renderLayout({
    title: 'Your account',
    page: 'dashboard',
    devMode: ctx.devMode,
    body: html`<dl class="account">
<dt>Signed in as</dt>
<dd id="account-email">${user.email ?? 'an account without an email address'}</dd>
<dt>Email address</dt>
<dd><span id="verification-status" class="status status--${user.emailVerified ? 'verified' : 'unverified'}">${user.email === null ? 'None to verify' : user.emailVerified ? 'Verified' : 'Not verified yet'}</span></dd>
</dl>
<p><a href="/account">Manage your account</a>: sessions, password, email address, linked sign-ins.</p>
${
  user.email !== null && !user.emailVerified
    ? html`<p>Check your inbox for the link that confirms your email address.</p>
<form method="post" action="/dashboard" novalidate data-api="/api/auth/resend-verification" id="resend-form">
<button type="submit" class="secondary" data-busy-text="Sending…">Send the verification email again</button>
</form>
${devLinkArea(ctx)}`
    : null
}
<form method="post" action="/dashboard" novalidate data-api="/api/auth/logout" id="sign-out-form">
<button type="submit" class="primary" data-busy-text="Signing out…">Sign out</button>
</form>`,
  });
}

/** What a form post without JavaScript reaches: the pages need the script to call the API. */
export function renderNoScriptPage(ctx: PageContext): string {
  return renderLayout({
    title: 'JavaScript needed',
    page: 'no-script',
    devMode: ctx.devMode,
    message: { kind: 'error', text: 'This form is sent by JavaScript, which did not run. Turn JavaScript on, go back and try again.' },
    body: html`<nav class="links" aria-label="Other actions"><p><a href="/login">Back to sign in</a></p></nav>`,
  });
}
