/** @module The text of the emails Gatehouse queues. Each names its link's lifetime. */
import type { EmailTemplate } from './outbox.js';

const PRODUCT_NAME = 'Gatehouse';

export interface RenderedEmail {
  template: EmailTemplate;
  subject: string;
  text: string;
}

export function renderVerificationEmail(url: string, lifetimeHours: number): RenderedEmail {
  return {
    template: 'email_verification',
    subject: `Confirm your email address for ${PRODUCT_NAME}`,
    text: [
      'Hello,',
      '',
      `Please confirm your email address by opening this link and pressing "Confirm":`,
      url,
      '',
      `The link works once and expires in ${lifetimeHours} hours.`,
      'If you did not create an account, you can ignore this email.',
    ].join('\n'),
  };
}

export function renderPasswordResetEmail(url: string, lifetimeHours: number): RenderedEmail {
  return {
    template: 'password_reset',
    subject: `Reset your ${PRODUCT_NAME} password`,
    text: [
      'Hello,',
      '',
      'Someone asked to reset the password of the account with this email address.',
      'To choose a new password, open this link:',
      url,
      '',
      `The link works once and expires in ${lifetimeHours === 1 ? '1 hour' : `${lifetimeHours} hours`}.`,
      'If it was not you, ignore this email: your password stays as it is.',
    ].join('\n'),
  };
}
