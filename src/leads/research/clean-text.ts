import { collapseWhitespace, htmlToText, truncate } from '../../content/text.js';

// Text as it leaves the research module: decoded, tag-free, whitespace-collapsed, bounded.

const TAG_LIKE = /<\/?[A-Za-z!?][^<>]*>/g;
// Control characters other than whitespace, and the bidi overrides that can disguise text.
const UNWANTED = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F\u202A-\u202E\u2066-\u2069\uFEFF]/g;

/**
 * Plain text from a string that may still carry markup or entity references (meta content and JSON-LD often do,
 * sometimes escaped twice). Nothing that looks like a tag survives.
 */
export function cleanText(value: string, max: number): string {
  let text = value;
  for (let round = 0; round < 2 && /<[A-Za-z!?/]|&[#A-Za-z]/.test(text); round++) text = htmlToText(text);
  text = collapseWhitespace(text.replace(TAG_LIKE, ' ').replace(UNWANTED, ''));
  return truncate(text, max);
}

/** cleanText, or null when nothing is left. */
export function cleanOrNull(value: unknown, max: number): string | null {
  if (typeof value !== 'string') return null;
  const text = cleanText(value, max);
  return text === '' ? null : text;
}

/** A comparison key: lower-case, accents dropped, letters and digits only ("Bücher-Haus GmbH" → "bucherhausgmbh"). */
export function matchKey(text: string): string {
  return text
    .normalize('NFKD')
    .replace(/\p{M}+/gu, '')
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, '');
}

/** Words, where Chinese and Japanese, written without spaces, count about one word for every two characters. */
export function wordCount(text: string): number {
  const ideographic = text.match(/[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}]/gu)?.length ?? 0;
  return text.trim().split(/\s+/).length + Math.floor(ideographic / 2);
}
