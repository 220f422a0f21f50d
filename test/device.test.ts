/**
 * A session's user-agent string in words (src/account/device.ts): real strings of current
 * browsers give the browser's and the system's names for "Chrome on Linux"; a string that names
 * neither gives nulls, never the raw string.
 */
import { describe, expect, test } from 'vitest';
import { describeDevice } from '../src/account/device.js';

describe('describeDevice', () => {
  test.each([
    ['Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36', 'Chrome', 'Linux'],
    ['Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/131.0.0.0 Safari/537.36', 'Chrome', 'Linux'],
    ['Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:133.0) Gecko/20100101 Firefox/133.0', 'Firefox', 'Windows'],
    [
      'Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1',
      'Safari',
      'iOS',
    ],
    [
      'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36 Edg/131.0.0.0',
      'Microsoft Edge',
      'macOS',
    ],
    ['Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Mobile Safari/537.36', 'Chrome', 'Android'],
  ])('%s → %s on %s', (userAgent, browser, os) => {
    expect(describeDevice(userAgent)).toEqual({ browser, os });
  });

  test('a string naming no browser, an empty one and none: nulls', () => {
    expect(describeDevice('curl/8.5.0')).toEqual({ browser: null, os: null });
    expect(describeDevice('')).toEqual({ browser: null, os: null });
    expect(describeDevice('   ')).toEqual({ browser: null, os: null });
    expect(describeDevice(null)).toEqual({ browser: null, os: null });
  });

  test('a browser without a system keeps the browser', () => {
    expect(describeDevice('Firefox/140')).toEqual({ browser: 'Firefox', os: null });
  });
});
