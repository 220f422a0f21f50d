/**
 * @module The organization pages: the Organizations section of /account, the page of one
 * organization (/organizations/:id) and the invitation page (/accept-invitation). Rendered on the
 * server as plain HTML and driven by /assets/organizations.js, which fills the lists from /api/orgs
 * and sends the forms that name their endpoint in `data-org-api`. The server enforces every right;
 * the page only leaves out the controls a role cannot use. The invitation page spends nothing on
 * GET: only its Accept button's POST does.
 */
import type { InvitationPageData, OrganizationPageData } from '../organizations/pages-data.js';
import type { Translate } from '../i18n/translator.js';
import { html, renderLayout, tHtml, type PageContext, type SafeHtml } from './html.js';

const SCRIPTS = ['/assets/organizations.js'];

/** A role in words: the built-in ones translated; an operator's own (ORG_ROLES_FILE) as named. */
export function roleLabel(t: Translate, role: string): string {
  if (role === 'owner') return t('script.org.role.owner');
  if (role === 'admin') return t('script.org.role.admin');
  if (role === 'member') return t('script.org.role.member');
  return role;
}

function isManager(role: string): boolean {
  return role === 'owner' || role === 'admin';
}

/** /account's section: the person's organizations (organizations.js fills the list) and the form that creates one. */
export function organizationsSection(ctx: PageContext, userId: string): SafeHtml {
  return html`<section class="section" id="organizations" aria-labelledby="orgs-title" data-user-id="${userId}">
<h2 id="orgs-title">${ctx.t('account.orgsTitle')}</h2>
<ul id="org-list" class="item-list" aria-live="polite"><li>${ctx.t('common.loading')}</li></ul>
<form id="org-create-form" method="post" action="/account" novalidate data-org-api="/api/orgs">
<div class="field">
<label for="org-name">${ctx.t('account.orgName')}</label>
<input id="org-name" name="name" type="text" maxlength="100" autocomplete="organization" required>
</div>
<button type="submit" class="secondary" data-busy-text="${ctx.t('account.orgCreating')}">${ctx.t('account.orgCreate')}</button>
</form>
</section>`;
}

export interface OrganizationPageOptions {
  organization: OrganizationPageData;
  userId: string;
  /** Every role an organization knows, built-in first (config.organizationRoles). */
  roles: readonly string[];
  hasPassword: boolean;
}

function roleOptions(ctx: PageContext, roles: readonly string[], selected: string): SafeHtml[] {
  return roles.map((role) =>
    role === selected
      ? html`<option value="${role}" selected>${roleLabel(ctx.t, role)}</option>`
      : html`<option value="${role}">${roleLabel(ctx.t, role)}</option>`,
  );
}

export function renderOrganizationPage(ctx: PageContext, options: OrganizationPageOptions): string {
  const { organization, userId } = options;
  const { t } = ctx;
  const manager = isManager(organization.role);
  // Only an owner makes owners; the page offers no role the reader cannot give.
  const assignable = options.roles.filter((role) => role !== 'owner' || organization.role === 'owner');
  return renderLayout({
    title: organization.name,
    page: 'organization',
    ctx,
    scripts: SCRIPTS,
    body: html`<div id="organization" data-organization-id="${organization.id}" data-user-id="${userId}" data-role="${organization.role}" data-roles="${options.roles.join(' ')}">
<p>${tHtml(t, 'org.slug', { slug: html`<code id="org-slug">${organization.slug}</code>` })}</p>
<p>${tHtml(t, 'script.org.yourRole', { role: html`<strong id="org-role">${roleLabel(t, organization.role)}</strong>` })}</p>
</div>

<section class="section" aria-labelledby="members-title">
<h2 id="members-title">${t('org.membersTitle')}</h2>
<ul id="member-list" class="item-list" aria-live="polite"><li>${t('common.loading')}</li></ul>
</section>

${manager ? invitationsSection(ctx, organization, assignable) : null}

${manager ? renameSection(ctx, organization) : null}

${organization.role === 'owner' ? deleteSection(ctx, organization, options.hasPassword) : null}

<nav class="links" aria-label="${t('common.otherActions')}"><p><a href="/account#organizations">${t('org.backToAccount')}</a></p></nav>`,
  });
}

function invitationsSection(ctx: PageContext, organization: OrganizationPageData, assignable: readonly string[]): SafeHtml {
  const { t } = ctx;
  return html`<section class="section" aria-labelledby="invitations-title">
<h2 id="invitations-title">${t('org.invitationsTitle')}</h2>
<ul id="invitation-list" class="item-list" aria-live="polite"><li>${t('common.loading')}</li></ul>
<form id="invite-form" method="post" action="/organizations/${organization.id}" novalidate data-org-api="/api/orgs/${organization.id}/invitations">
<div class="field">
<label for="invite-email">${t('common.emailAddress')}</label>
<input id="invite-email" name="email" type="email" autocomplete="off" inputmode="email" required>
</div>
<div class="field">
<label for="invite-role">${t('org.role')}</label>
<select id="invite-role" name="role">${roleOptions(ctx, assignable, 'member')}</select>
</div>
<button type="submit" class="secondary" data-busy-text="${t('common.sending')}">${t('org.inviteSubmit')}</button>
</form>
${ctx.devMode ? html`<div id="dev-link" class="dev-link" hidden><p><strong>${t('common.devMode')}</strong> <a id="dev-link-anchor" href="#"></a></p></div>` : null}
</section>`;
}

function renameSection(ctx: PageContext, organization: OrganizationPageData): SafeHtml {
  const { t } = ctx;
  return html`<section class="section" aria-labelledby="rename-title">
<h2 id="rename-title">${t('org.settingsTitle')}</h2>
<form id="rename-form" method="post" action="/organizations/${organization.id}" novalidate data-org-api="/api/orgs/${organization.id}" data-method="PATCH">
<div class="field">
<label for="rename-name">${t('org.name')}</label>
<input id="rename-name" name="name" type="text" maxlength="100" value="${organization.name}" required>
</div>
<div class="field">
<label for="rename-slug">${t('org.slugLabel')}</label>
<input id="rename-slug" name="slug" type="text" maxlength="64" pattern="[a-z0-9-]+" value="${organization.slug}" autocapitalize="off" spellcheck="false" required>
</div>
<button type="submit" class="secondary" data-busy-text="${t('common.saving')}">${t('org.save')}</button>
</form>
</section>`;
}

function deleteSection(ctx: PageContext, organization: OrganizationPageData, hasPassword: boolean): SafeHtml {
  const { t } = ctx;
  return html`<section class="section" aria-labelledby="org-delete-title">
<h2 id="org-delete-title">${t('org.deleteTitle')}</h2>
<p>${t('org.deleteIntro')}</p>
<form id="org-delete-form" method="post" action="/organizations/${organization.id}" novalidate data-org-api="/api/orgs/${organization.id}" data-method="DELETE">
${
  hasPassword
    ? html`<div class="field">
<label for="org-delete-current">${t('common.currentPassword')}</label>
<input id="org-delete-current" name="currentPassword" type="password" autocomplete="current-password" required>
</div>`
    : null
}
<button type="submit" class="danger" data-busy-text="${t('common.deleting')}">${t('org.deleteSubmit')}</button>
</form>
</section>`;
}

export interface AcceptInvitationPageOptions {
  token: string | null;
  invitation: InvitationPageData | null;
  /** The signed-in account, if any. */
  user: { email: string | null; emailVerified: boolean } | null;
  /** This page's own address (with its token): where sign-in and registration come back to. */
  selfPath: string;
}

export function renderAcceptInvitationPage(ctx: PageContext, options: AcceptInvitationPageOptions): string {
  const { t } = ctx;
  const { invitation } = options;
  if (options.token === null || invitation === null) {
    return renderLayout({
      title: t('invite.title'),
      page: 'accept-invitation',
      ctx,
      message: { kind: 'error', text: options.token === null ? t('common.missingToken') : t('invite.invalid') },
      body: html`<nav class="links" aria-label="${t('common.otherActions')}"><p><a href="/dashboard">${t('common.goToAccount')}</a></p></nav>`,
    });
  }
  const intro = html`<p id="invitation">${tHtml(t, 'invite.intro', {
    organization: html`<strong>${invitation.organization.name}</strong>`,
    role: html`<strong>${roleLabel(t, invitation.role)}</strong>`,
  })}</p>`;
  return renderLayout({
    title: t('invite.title'),
    page: 'accept-invitation',
    ctx,
    scripts: SCRIPTS,
    body: html`${intro}
${invitationAction(ctx, options, invitation)}`,
  });
}

/** What the reader can do: sign in or register first; accept; or switch to the invited account. */
function invitationAction(ctx: PageContext, options: AcceptInvitationPageOptions, invitation: InvitationPageData): SafeHtml {
  const { t } = ctx;
  const email = html`<strong>${invitation.email}</strong>`;
  const back = `return_to=${encodeURIComponent(options.selfPath)}&login_hint=${encodeURIComponent(invitation.email)}`;
  if (options.user === null) {
    return html`<p>${tHtml(t, 'invite.signInFirst', { email })}</p>
<p><a id="invitation-sign-in" class="button primary" href="/login?${back}">${t('common.signIn')}</a></p>
<p><a id="invitation-register" class="button secondary" href="/register?${back}">${t('register.title')}</a></p>`;
  }
  if (options.user.email !== invitation.email) {
    return html`<p id="invitation-other-account">${tHtml(t, 'invite.otherAccount', { email, current: html`<strong>${options.user.email ?? t('dashboard.noEmail')}</strong>` })}</p>
<form id="invitation-switch-form" method="post" action="/accept-invitation" novalidate data-org-api="/api/auth/logout" data-next="/login?${back}">
<button type="submit" class="primary" data-busy-text="${t('common.signingOut')}">${t('invite.switchAccount', { email: invitation.email })}</button>
</form>`;
  }
  return html`${options.user.emailVerified ? null : html`<p class="notice">${tHtml(t, 'invite.notVerified', { email })}</p>`}
<form id="accept-form" method="post" action="/accept-invitation" novalidate data-org-api="/api/orgs/invitations/accept" data-return-to="${options.selfPath}">
<input type="hidden" name="token" value="${options.token}">
<button type="submit" class="primary" data-busy-text="${t('invite.accepting')}">${t('invite.accept')}</button>
</form>`;
}
