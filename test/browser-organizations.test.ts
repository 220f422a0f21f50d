/**
 * Organizations end to end in a real headless Chromium against the built server in development
 * mode: an owner creates one on /account and invites an address from its page; the invited person,
 * in a second browser, opens the invitation link, is sent to sign in (or to register) and back,
 * and accepts; the owner changes their role; they leave. Skipped without /usr/bin/chromium, unless
 * REQUIRE_BROWSER=1 (CI): support/browser.ts.
 */
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { describe, expect, test } from 'vitest';
import { E2E_PASSWORD as PASSWORD, SCREENSHOTS, hasBrowser, useBrowserSuite } from './support/browser.js';

describe.skipIf(!hasBrowser)('organizations in Chromium', { timeout: 90_000 }, () => {
  const suite = useBrowserSuite({
    name: 'organizations',
    env: () => ({
      RATE_LIMIT_REGISTER: '1000/15m',
      RATE_LIMIT_LOGIN: '1000/15m',
      RATE_LIMIT_VERIFY_EMAIL: '1000/15m',
    }),
  });
  const { openPage, waitForMessage } = suite;

  function address(label: string): string {
    return `${label}-${randomBytes(4).toString('hex')}@example.com`;
  }

  /** A new account over the API, its address verified through the development-mode token. */
  async function newAccount(email: string): Promise<void> {
    const post = (url: string, body: unknown): Promise<Response> =>
      fetch(`${suite.baseUrl}${url}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const registered = await post('/api/auth/register', { email, password: PASSWORD });
    expect(registered.status).toBe(201);
    const { verificationToken } = (await registered.json()) as { verificationToken: string };
    expect((await post('/api/auth/verify-email', { token: verificationToken })).status).toBe(200);
  }

  async function signInOn(page: Page, email: string, landing: string): Promise<void> {
    await page.fill('#email', email);
    await page.fill('#password', PASSWORD);
    await page.click('#first-factor button[type="submit"]');
    await page.waitForURL(`**${landing}`);
  }

  /** The owner signs in, creates an organization on /account, opens its page and invites `email`; the invitation's link. */
  async function ownerInvites(ownerEmail: string, email: string): Promise<{ owner: Page; organizationUrl: string; link: string }> {
    await newAccount(ownerEmail);
    const owner = await openPage();
    await owner.goto('/account');
    await signInOn(owner, ownerEmail, '/account');
    await owner.waitForFunction(() => document.getElementById('org-list')?.textContent === 'You are not in any organization yet.');
    await owner.fill('#org-name', 'Acme Robotics');
    await owner.click('#org-create-form button[type="submit"]');
    expect(await waitForMessage(owner, /created/)).toBe('Acme Robotics is created, with you as its owner.');
    await owner.waitForSelector('#org-list a');
    expect(await owner.locator('#org-list li span').first().textContent()).toBe('Your role: Owner');
    await owner.click('#org-list a:has-text("Acme Robotics")');
    await owner.waitForURL('**/organizations/*');
    expect(await owner.locator('main h1').textContent()).toBe('Acme Robotics');
    expect(await owner.locator('#org-role').textContent()).toBe('Owner');
    await owner.waitForSelector(`#member-list li.item--current:has-text("${ownerEmail}")`);

    await owner.fill('#invite-email', email);
    await owner.selectOption('#invite-role', 'member');
    await owner.click('#invite-form button[type="submit"]');
    expect(await waitForMessage(owner, /invitation was sent/)).toBe(`An invitation was sent to ${email}.`);
    await owner.waitForSelector(`#invitation-list li:has-text("${email}")`);
    const link = await owner.locator('#dev-link-anchor').getAttribute('href');
    expect(link).toMatch(/^\/accept-invitation\?token=[\w-]+\.[\w-]+$/);
    return { owner, organizationUrl: owner.url(), link: link! };
  }

  test('invite, sign in from the link and back, accept; the owner changes the role; the member leaves', async () => {
    const ownerEmail = address('owner');
    const inviteeEmail = address('invitee');
    const { owner, organizationUrl, link } = await ownerInvites(ownerEmail, inviteeEmail);
    await owner.screenshot({ path: path.join(SCREENSHOTS, 'organization-desktop.png'), fullPage: true });
    await newAccount(inviteeEmail);

    // A second browser, not signed in: the link names the organization and sends it to sign in first.
    const invitee = await openPage();
    await invitee.goto(link);
    expect(await invitee.locator('#invitation').textContent()).toBe('You are invited to join Acme Robotics as Member.');
    await invitee.click('#invitation-sign-in');
    await invitee.waitForURL('**/login?**');
    expect(await invitee.inputValue('#email')).toBe(inviteeEmail);
    await invitee.fill('#password', PASSWORD);
    await invitee.click('#first-factor button[type="submit"]');
    await invitee.waitForURL('**/accept-invitation**');
    // Back, signed in: the token leaves the address bar (the form holds it); nothing is spent until Accept.
    await invitee.waitForSelector('#accept-form');
    expect(new URL(invitee.url()).search).toBe('');
    await invitee.click('#accept-form button[type="submit"]');
    await invitee.waitForURL(organizationUrl);
    expect(await invitee.locator('#org-role').textContent()).toBe('Member');
    expect(await invitee.locator('#invite-form').count()).toBe(0);

    // The owner sees the new member and makes them an admin.
    await owner.reload();
    const row = owner.locator(`#member-list li:has-text("${inviteeEmail}")`);
    await row.waitFor();
    await row.locator('select').selectOption('admin');
    await row.locator('button:has-text("Change role")').click();
    expect(await waitForMessage(owner, /is now/)).toBe(`${inviteeEmail} is now Admin.`);
    // The list is read again: the row now says Admin.
    await owner.locator(`#member-list li:has-text("${inviteeEmail}") span:has-text("Admin")`).waitFor();

    // The only owner cannot leave while others remain: /account shows the server's reason.
    await owner.goto('/account');
    await owner.click('#org-list li:has-text("Acme Robotics") button:has-text("Leave")');
    expect(await waitForMessage(owner, /only owner/)).toBe('You are the only owner. Make someone else an owner first, or delete the organization.');
    await owner.goto(organizationUrl);

    // The member, now an admin, leaves from the organization's page.
    await invitee.reload();
    expect(await invitee.locator('#org-role').textContent()).toBe('Admin');
    await invitee.click('#member-list li.item--current button:has-text("Leave")');
    await invitee.waitForURL('**/account#organizations');
    await invitee.waitForFunction(() => document.getElementById('org-list')?.textContent === 'You are not in any organization yet.');
    await owner.reload();
    await owner.waitForSelector(`#member-list li:has-text("${ownerEmail}")`);
    expect(await owner.locator('#member-list li').count()).toBe(1);
  });

  test('without an account: register from the invitation with the address filled in, confirm it, come back and accept', async () => {
    const inviteeEmail = address('newcomer');
    const { link, organizationUrl } = await ownerInvites(address('owner2'), inviteeEmail);
    const invitee = await openPage();
    await invitee.goto(link);
    await invitee.click('#invitation-register');
    await invitee.waitForURL('**/register?**');
    expect(await invitee.inputValue('#email')).toBe(inviteeEmail);
    await invitee.fill('#password', PASSWORD);
    await invitee.click('form[data-api="/api/auth/register"] button[type="submit"]');
    await waitForMessage(invitee, /account is created/);
    // Development mode shows the verification link instead of sending it; "Continue" leads back to the invitation.
    const verification = await invitee.locator('#dev-link-anchor').getAttribute('href');
    expect(await invitee.locator('#continue a').getAttribute('href')).toBe(link);
    await invitee.goto(verification!);
    await invitee.click('form[data-api="/api/auth/verify-email"] button[type="submit"]');
    await waitForMessage(invitee, /verified/);
    await invitee.goto(link);
    await invitee.click('#accept-form button[type="submit"]');
    await invitee.waitForURL(organizationUrl);
    expect(await invitee.locator('#org-role').textContent()).toBe('Member');
  });

  test('signed in with another account: the page says whose invitation it is and switches accounts', async () => {
    const inviteeEmail = address('switch');
    const { owner, link, organizationUrl } = await ownerInvites(address('owner3'), inviteeEmail);
    await newAccount(inviteeEmail);
    // The owner's own browser opens the link: it is someone else's invitation.
    await owner.goto(link);
    expect(await owner.locator('#invitation-other-account').textContent()).toContain(`This invitation is for ${inviteeEmail}`);
    await owner.click('#invitation-switch-form button[type="submit"]');
    await owner.waitForURL('**/login?**');
    expect(await owner.inputValue('#email')).toBe(inviteeEmail);
    await owner.fill('#password', PASSWORD);
    await owner.click('#first-factor button[type="submit"]');
    await owner.waitForSelector('#accept-form');
    await owner.click('#accept-form button[type="submit"]');
    await owner.waitForURL(organizationUrl);
    expect(await owner.locator('#org-role').textContent()).toBe('Member');
  });
});
