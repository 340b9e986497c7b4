import { decodeXML } from 'entities';
import sanitizeHtml from 'sanitize-html';

// Plain text in and out of HTML, and the bounds text is cut to: shared by the feed reader, the lead research and
// the dashboard.

const BLOCK_BOUNDARY =
  /<(?:br|hr|\/?(?:p|div|li|ul|ol|dl|dt|dd|h[1-6]|tr|td|th|table|blockquote|pre|section|article|figure|figcaption|header|footer))\b[^>]*>/gi;

/**
 * The text of an HTML fragment: tags dropped (scripts and styles with their content), entity references decoded,
 * whitespace collapsed.
 */
export function htmlToText(html: string): string {
  if (!/[<&]/.test(html)) return collapseWhitespace(html);
  const spaced = html.replace(BLOCK_BOUNDARY, ' $&');
  // sanitize-html escapes the text it keeps with the XML entities only: decodeXML undoes exactly that.
  return collapseWhitespace(decodeXML(sanitizeHtml(spaced, { allowedTags: [], allowedAttributes: {} })));
}

/** Every run of whitespace one space, no whitespace at either end. */
export function collapseWhitespace(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

/**
 * Text for one line: zero-width characters dropped, every run of whitespace or control characters (line breaks
 * included) one space, no space at either end.
 */
export function singleLine(text: string): string {
  return collapseWhitespace(text.replace(/[\u200b-\u200d\u2060\ufeff]/g, '').replace(/\p{Cc}/gu, ' '));
}

const ESCAPES: Readonly<Record<string, string>> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
  '`': '&#96;',
};

/** Plain text as HTML, fit for element content and for attribute values in either quotes. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"'`]/g, (character) => ESCAPES[character]!);
}

/** At most `max` characters (code points), an ellipsis marking a cut. */
export function truncate(text: string, max: number): string {
  if (text.length <= max) return text;
  const points = Array.from(text);
  if (points.length <= max) return text;
  return `${points
    .slice(0, max - 1)
    .join('')
    .trimEnd()}…`;
}
