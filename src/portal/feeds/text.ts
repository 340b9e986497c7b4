import sanitizeHtml from 'sanitize-html';

// Plain text out of feed HTML, and the bounds every text field is cut to.

const BLOCK_BOUNDARY =
  /<(?:br|hr|\/?(?:p|div|li|ul|ol|dl|dt|dd|h[1-6]|tr|td|th|table|blockquote|pre|section|article|figure|figcaption|header|footer))\b[^>]*>/gi;

const BASIC_ENTITIES: Readonly<Record<string, string>> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };

/** Undoes the escaping sanitize-html applies to text (the five XML entities and numeric references). */
function unescapeText(text: string): string {
  return text.replace(/&(#x[0-9a-f]+|#\d+|amp|lt|gt|quot|apos);/gi, (whole, ref: string) => {
    if (ref[0] !== '#') return BASIC_ENTITIES[ref.toLowerCase()] ?? whole;
    const codePoint = ref[1] === 'x' || ref[1] === 'X' ? parseInt(ref.slice(2), 16) : Number(ref.slice(1));
    return codePoint > 0 && codePoint <= 0x10ffff ? String.fromCodePoint(codePoint) : whole;
  });
}

/** The text of an HTML fragment: tags dropped (scripts and styles with their content), whitespace collapsed. */
export function htmlToText(html: string): string {
  if (!/[<&]/.test(html)) return collapseWhitespace(html);
  const spaced = html.replace(BLOCK_BOUNDARY, ' $&');
  return collapseWhitespace(unescapeText(sanitizeHtml(spaced, { allowedTags: [], allowedAttributes: {} })));
}

export function collapseWhitespace(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

/** Plain text as HTML. */
export function escapeHtml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

/** At most `max` characters (code points), an ellipsis marking a cut. */
export function truncate(text: string, max: number): string {
  if (text.length <= max) return text;
  const points = Array.from(text);
  if (points.length <= max) return text;
  return `${points.slice(0, max - 1).join('').trimEnd()}…`;
}
