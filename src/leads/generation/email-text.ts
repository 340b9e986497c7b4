// Small, language-neutral text helpers for writing emails from scraped facts: condensing a website's description
// to one clause, casing names and sentences, tidying whitespace. They never translate or drop letters: whatever
// the script, text is only trimmed, cut at a boundary or re-cased at its first letter.

import { createHash } from 'node:crypto';
import { singleLine } from '../../content/text.js';

/** Upper-cases the first letter; text written entirely in capitals (a shouted tagline) is lower-cased first. */
export function sentenceCase(text: string): string {
  let s = text;
  if (/\p{Lu}/u.test(s) && !/\p{Ll}/u.test(s) && (s.match(/\p{L}/gu)?.length ?? 0) > 4) s = s.toLowerCase();
  const first = s.search(/\p{L}/u);
  if (first < 0) return s;
  // Only when the text starts with its letter (or an opening quote/bracket): "iPhone cases…" stays as written.
  if (first > 0 && !/^[\p{Ps}\p{Pi}"'¿¡]+$/u.test(s.slice(0, first))) return s;
  const letter = String.fromCodePoint(s.codePointAt(first)!);
  const rest = s.slice(first + letter.length);
  // A brand that starts lower-case and continues with a capital (iPhone, eBay) keeps its spelling.
  if (/^\p{Ll}\p{Lu}/u.test(letter + rest.slice(0, 1))) return s;
  return s.slice(0, first) + letter.toUpperCase() + rest;
}

/**
 * A person's name as a salutation would write it: trimmed, and re-cased only when typed all in one case
 * ("JOHN", "mary-jane" → "John", "Mary-Jane"); mixed spellings (McDonald, van der Berg) are kept.
 */
export function personName(name: string): string {
  const s = singleLine(name);
  const hasUpper = /\p{Lu}/u.test(s);
  const hasLower = /\p{Ll}/u.test(s);
  if (hasUpper && hasLower) return s;
  if (!hasUpper && !hasLower) return s; // scripts without case
  return s.toLowerCase().replace(/(^|[\s\-'’])(\p{Ll})/gu, (_m, sep: string, letter: string) => sep + letter.toUpperCase());
}

/** Cuts `text` to at most `max` characters (code points) at a word boundary, never inside a surrogate pair. */
export function truncateAtWord(text: string, max: number): string {
  const chars = Array.from(text);
  if (chars.length <= max) return text;
  const head = chars.slice(0, max + 1).join('');
  const space = head.lastIndexOf(' ');
  const cut = space >= Math.floor(max * 0.5) ? head.slice(0, space) : chars.slice(0, max).join('');
  return trimDanglingWords(cut);
}

// Words a clause must not end on once it has been cut short (English; other languages are only cut at spaces).
const DANGLING = new Set([
  'a',
  'an',
  'the',
  'and',
  'or',
  'but',
  'nor',
  'of',
  'for',
  'to',
  'in',
  'on',
  'at',
  'by',
  'with',
  'from',
  'into',
  'as',
  'that',
  'which',
  'who',
  'whose',
  'our',
  'your',
  'their',
  'its',
  'is',
  'are',
  'we',
  'you',
  'they',
  'it',
  'this',
  'these',
  'those',
  'than',
  'so',
  'such',
  'like',
  'including',
  'via',
  'per',
  'about',
  '&',
  '+',
  '-',
  '–',
  '—',
]);

function trimDanglingWords(text: string): string {
  let s = text.replace(/[\s,;:\-–—/|&+(]+$/u, '');
  for (;;) {
    const space = s.lastIndexOf(' ');
    if (space < 0) return s;
    const last = s.slice(space + 1).toLowerCase();
    if (!DANGLING.has(last)) return s;
    s = s.slice(0, space).replace(/[\s,;:\-–—/|&+(]+$/u, '');
  }
}

const SENTENCE_END = /([.!?…]+)(?=\s+[\p{Lu}\p{Lo}"“‘(\d])|([。！？]+)/gu;
// Abbreviations after which a full stop does not end a sentence.
const ABBREVIATIONS = new Set([
  'inc',
  'ltd',
  'co',
  'corp',
  'llc',
  'gmbh',
  'e.g',
  'i.e',
  'etc',
  'vs',
  'mr',
  'mrs',
  'ms',
  'dr',
  'st',
  'no',
  'approx',
  'dept',
  'est',
  'jr',
  'sr',
  'ag',
  'sa',
  'bv',
  'nv',
  'plc',
  'u.s',
  'u.k',
]);

/** Splits text into sentences at ., !, ?, … (followed by a capital) and at the CJK full stops. */
export function splitSentences(text: string): string[] {
  const sentences: string[] = [];
  let start = 0;
  for (const m of text.matchAll(SENTENCE_END)) {
    const end = m.index! + m[0].length;
    if (m[1] === '.') {
      const word = text.slice(start, m.index!).split(/\s+/).pop()?.toLowerCase() ?? '';
      if (ABBREVIATIONS.has(word) || /^\p{L}$/u.test(word)) continue; // "Acme Inc. builds", "J. Smith"
    }
    sentences.push(text.slice(start, end).trim());
    start = end;
  }
  const rest = text.slice(start).trim();
  if (rest) sentences.push(rest);
  return sentences.filter((s) => s !== '');
}

const JUNK_TAIL =
  /(?:\s*(?:\.{3}|…|»|›|→|>>|\[\s*(?:\.{3}|…)\s*\]|\b(?:read|learn|see|find out|discover) more\b|\bmore info\b|\bclick here\b)\s*)+$/iu;
const GREETING =
  /^(?:welcome(?:\s+(?:to|at)\b.*)?|hello|hi|hey|home|homepage|home page|startseite|accueil|bienvenue(?:\s.*)?|willkommen(?:\s.*)?|bienvenido(?:\s.*)?|benvenuti(?:\s.*)?)[.!…]*$/iu;
const SITE_WORDS = /^(?:home|homepage|home page|official (?:site|website)|website|startseite|accueil)$/iu;
/** A thank-you to the visitor: "Thank you for visiting the Acme website." */
const THANKS = /^thank(?:s| you) for (?:visiting|stopping by|coming to|your visit)\b/iu;
/** News, not what the company does: "Acme is honored to announce the creation of …". */
const ANNOUNCEMENT =
  /\b(?:is|are|am|was|were)\s+(?:(?:so|very)\s+)?(?:honou?red|pleased|proud|excited|delighted|thrilled|happy)\s+to\s+(?:announce|share|welcome|introduce)\b/iu;
/**
 * Text run together from several elements of a page ("… YOUR VOICE COUNT!Join the …", "… IN MONTANAHealth Center
 * OperationsTraining …"): a sentence's end glued to the next, or two words glued in capitals, is navigation, not a
 * description.
 */
const GLUED_SENTENCE = /[\p{L}]{2}[!?.]\p{Lu}\p{Ll}/u;
const GLUED_WORDS = /\p{Ll}{3}\p{Lu}\p{Ll}{3}|\p{Lu}{3}\p{Lu}\p{Ll}{2}/gu;

function runTogether(sentence: string, companyName: string): boolean {
  if (GLUED_SENTENCE.test(sentence)) return true;
  // A brand may be written so ("BeenVerified", "HubSpot"): its own name does not count.
  const glued = sentence
    .split(/\s+/)
    .filter((word) => !companyName.includes(word.replace(/[^\p{L}\p{N}]+/gu, '')) && (word.match(GLUED_WORDS)?.length ?? 0) > 0);
  return glued.length >= 2;
}

const SEPARATORS = [' | ', ' · ', ' • ', ' :: ', ' - ', ' – ', ' — '];
const LABEL =
  /^(?:about(?: us)?|who we are|what we do|our mission|über uns|wer wir sind|à propos(?: de nous)?|a propos(?: de nous)?|qui sommes-nous|quiénes somos|sobre nosotros|chi siamo|over ons|om oss|om os)\s*[:|\-–—]\s*/iu;

/** The last (or first) separator of `text` and the part after (or before) it. */
function splitAtSeparator(text: string, from: 'end' | 'start'): { at: number; sep: string; part: string } | undefined {
  let found: { at: number; sep: string } | undefined;
  for (const sep of SEPARATORS) {
    const at = from === 'end' ? text.lastIndexOf(sep) : text.indexOf(sep);
    if (at <= 0) continue;
    if (!found || (from === 'end' ? at > found.at : at < found.at)) found = { at, sep };
  }
  if (!found) return undefined;
  const part = from === 'end' ? text.slice(found.at + found.sep.length) : text.slice(0, found.at);
  return { ...found, part: part.trim() };
}

/** Removes site-name suffixes and prefixes ("… | Acme", "Home – …"), labels ("About us:") and "Read more…". */
function stripDecorations(text: string, companyName: string): string {
  let s = text.replace(JUNK_TAIL, '').trim();
  const company = companyName.trim().toLowerCase();
  const isName = (part: string) => company !== '' && (part.toLowerCase() === company || part.toLowerCase().startsWith(`${company} `));
  for (let pass = 0; pass < 4; pass++) {
    const before = s;
    // "…claim | Acme", "…claim - Home", "…claim | Free shipping"
    const tail = splitAtSeparator(s, 'end');
    if (tail && tail.part.split(/\s+/).length <= 5) {
      const piped = tail.sep.trim() !== '-' && tail.sep.trim() !== '–' && tail.sep.trim() !== '—';
      if (isName(tail.part) || SITE_WORDS.test(tail.part) || piped) s = s.slice(0, tail.at).trim();
    }
    // "Acme | claim…", "Home - claim…"; not a sentence that starts with the name ("Acme offers car insurance … - get a
    // quote today").
    const head = splitAtSeparator(s, 'start');
    if (head && head.part.split(/\s+/).length <= 5 && (isName(head.part) || SITE_WORDS.test(head.part))) {
      s = s.slice(head.at + head.sep.length).trim();
    }
    s = s.replace(LABEL, '').replace(JUNK_TAIL, '').trim();
    if (s === before) break;
  }
  return s;
}

/** Characters a clause may not end with: punctuation, separators, and an opening bracket or quote left alone. */
const TRAILING_PUNCTUATION = /[\s.!?…,;:·•|/\\\-–—([{"'“‘«。！？、，；：]+$/u;

function balanceBrackets(text: string): string {
  let s = text;
  const pairs: [string, string][] = [
    ['(', ')'],
    ['[', ']'],
    ['“', '”'],
    ['«', '»'],
  ];
  for (const [open, close] of pairs) {
    const opens = s.split(open).length - 1;
    const closes = s.split(close).length - 1;
    if (opens > closes) {
      // Drop the unclosed aside, unless it is most of the clause; then drop only its bracket.
      const before = s.slice(0, s.lastIndexOf(open));
      s = wordCount(before) >= 3 || isUnspaced(before) ? before : s.replace(open, '');
    } else if (closes > opens && !s.includes(open)) s = s.replaceAll(close, '');
  }
  if ((s.split('"').length - 1) % 2 === 1) s = s.replaceAll('"', '');
  return s.replace(TRAILING_PUNCTUATION, '');
}

function wordCount(text: string): number {
  return text.split(/\s+/).filter((w) => /\p{L}|\p{N}/u.test(w)).length;
}

/** True for text in a script written without spaces between words (Chinese, Japanese, Thai…). */
const MAX_SLOGAN_WORDS = 4;
const MAX_UNSPACED_SLOGAN_CHARS = 12;

function isSlogan(sentence: string): boolean {
  if (!/[!！]\s*$/u.test(sentence)) return false;
  const bare = sentence.replace(TRAILING_PUNCTUATION, '').trim();
  return isUnspaced(bare) ? Array.from(bare).length <= MAX_UNSPACED_SLOGAN_CHARS : wordCount(bare) <= MAX_SLOGAN_WORDS;
}

function isUnspaced(text: string): boolean {
  return /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Thai}]/u.test(text) && wordCount(text) < 4;
}

export interface CondenseOptions {
  /** The company's name, to drop "| Acme" suffixes and to refuse a description that is only the name. */
  companyName?: string;
  /** Upper bound of the clause in characters (default 160). */
  maxChars?: number;
}

/**
 * One clause that says what a company does, from a website's description: the first meaningful sentence, without
 * greetings, site-name decorations or "Read more…", cut at a clause or word boundary when long, sentence-cased and
 * without final punctuation. Undefined when the text says nothing usable (empty, only the name, only a greeting).
 */
export function condenseDescription(text: string | null | undefined, options: CondenseOptions = {}): string | undefined {
  if (!text) return undefined;
  const companyName = options.companyName ?? '';
  const max = options.maxChars ?? 160;
  // Bounded work on hostile input: nothing past the first few sentences is ever used.
  const cleaned = stripDecorations(singleLine(Array.from(text.slice(0, 4000)).slice(0, 2000).join('')), companyName);
  if (cleaned === '') return undefined;

  const company = companyName.trim().toLowerCase();
  const sentences = splitSentences(cleaned)
    .map((s) => stripDecorations(s, companyName))
    .filter((s) => {
      const bare = s.replace(TRAILING_PUNCTUATION, '').trim();
      if (bare === '' || GREETING.test(bare) || THANKS.test(bare) || bare.toLowerCase() === company) return false;
      // A question ("Looking for NYC apartments?") asks the reader; it says nothing of what the company does.
      if (/[?？]\s*$/u.test(s)) return false;
      return isUnspaced(bare) ? Array.from(bare).length >= 6 : wordCount(bare) >= 3;
    });
  // A description that opens with news or with the page's navigation run together is no description at all: what
  // follows it is more of the same.
  if (sentences[0] && (ANNOUNCEMENT.test(sentences[0]) || runTogether(sentences[0], companyName))) return undefined;
  // A short exclamation ("話題のサイト！", "Huge savings!") cheers rather than says what the company does: a plain
  // statement after it is taken first. A long one ("Acme offers car, home and life insurance and much more!") says it.
  const sentence = sentences.find((s) => !isSlogan(s)) ?? sentences[0];
  if (!sentence) return undefined;

  let clause = sentence;
  if (Array.from(clause).length > max) clause = cutClause(clause, max);
  clause = balanceBrackets(clause).trim();
  if (clause === '' || clause.toLowerCase() === company) return undefined;
  return sentenceCase(clause);
}

/**
 * Cuts a long sentence at its first clause boundary past 40% of `max` (the main clause, before the lists and
 * asides that follow it), else at a word.
 */
function cutClause(sentence: string, max: number): string {
  const chars = Array.from(sentence);
  const head = chars.slice(0, max + 1).join('');
  const boundary = /(?:,|;|:|\s[–—-]\s|\s\(|、|，|；)/gu;
  for (const m of head.matchAll(boundary)) {
    if (m.index! >= Math.floor(max * 0.4)) return trimDanglingWords(head.slice(0, m.index!));
  }
  if (isUnspaced(sentence)) return chars.slice(0, max).join('');
  return truncateAtWord(sentence, max);
}

/** Ends a clause as a sentence: with "。" after CJK text, else with ".". */
export function endSentence(clause: string): string {
  if (/[.!?。！？]$/u.test(clause)) return clause;
  return /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}]$/u.test(clause) ? `${clause}。` : `${clause}.`;
}

/** A subject: one line, single spaces. */
export function tidySubject(subject: string): string {
  return singleLine(subject);
}

/**
 * A plain-text body: LF line ends, no trailing spaces, runs of spaces inside a line made one (indentation is
 * kept), at most one blank line in a row, no blank lines at either end.
 */
export function tidyBody(body: string): string {
  return body
    .replace(/\r\n?/g, '\n')
    .replace(/[\u200b\ufeff]/g, '')
    .split('\n')
    .map((line) => {
      const indent = /^[ \t]*/.exec(line)![0];
      return (
        indent +
        line
          .slice(indent.length)
          .replace(/[ \t\u00a0]{2,}/g, ' ')
          .trimEnd()
      );
    })
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .replace(/^(?:[ \t]*\n)+/, '')
    .trimEnd();
}

/** A stable, platform-independent digest of the inputs, for choosing among phrasings. */
export function stableDigest(...parts: string[]): Buffer {
  return createHash('sha256').update(parts.join('\u0000')).digest();
}

/** "a", "a and b", "a, b and c". */
export function joinList(items: readonly string[]): string {
  if (items.length <= 1) return items[0] ?? '';
  return `${items.slice(0, -1).join(', ')} and ${items[items.length - 1]}`;
}
