/** @module The one HTML escaping function, for the pages and the HTML emails alike. */

const HTML_ESCAPES: Readonly<Record<string, string>> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

/**
 * Escapes text for element content and for quoted attribute values. Every value that reaches
 * HTML from outside (query, user record, config, a link) goes through here.
 * @example escapeHtml('<b title="x">') === '&lt;b title=&quot;x&quot;&gt;'
 */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (ch) => HTML_ESCAPES[ch] ?? ch);
}
