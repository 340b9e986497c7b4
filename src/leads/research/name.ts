import { domainToUnicode } from 'node:url';
import transliterate from '@sindresorhus/transliterate';
import TinyPinyin from 'tiny-pinyin';
import { getDomain } from 'tldts';
import type { CompanyProfile } from './types.js';
import { MAX_NAME_LENGTH } from './types.js';
import { collapseWhitespace } from '../../content/text.js';
import { cleanText, matchKey } from './clean-text.js';
import { CONNECTORS, labelWords } from './domain-words.js';

// Company names from what a domain and a page title tell.

/**
 * The domain a company registered, by the Public Suffix List (tldts): mail.acme.co.uk → acme.co.uk, acme.gv.at →
 * acme.gv.at. The list's private section counts too, so foo.github.io is foo's own (as anyone's site under it is),
 * not GitHub's. A domain that is itself a suffix (co.uk) stays as it is.
 */
export function registrableDomain(domain: string): string {
  const host = domain.toLowerCase().replace(/\.$/, '');
  return getDomain(host, { allowPrivateDomains: true }) ?? host;
}

/** The company's own label of a domain, in Unicode: xn--bcher-kva.de → bücher, acme.co.uk → acme. */
export function companyLabel(domain: string): string {
  const registrable = registrableDomain(domain);
  const unicode = domainToUnicode(registrable) || registrable;
  return unicode.split('.')[0] ?? '';
}

function capitalize(word: string): string {
  const [first = '', ...rest] = Array.from(word);
  return first.toLocaleUpperCase() + rest.join('');
}

/**
 * "acme-corp.com" → "Acme Corp", "acmewidgets.com" → "Acme Widgets", "skinbylovely.com" → "Skin by Lovely",
 * "bücher.de" → "Bücher", "3m.com" → "3m".
 */
export function nameFromDomain(domain: string): string {
  const words = companyLabel(domain)
    .split(/[-_]+/)
    .filter(Boolean)
    .flatMap((part) => labelWords(part));
  const name = words.map((word, index) => (index > 0 && CONNECTORS.has(word) ? word : capitalize(word))).join(' ');
  return cleanText(name || domain, MAX_NAME_LENGTH);
}

/** All that the domain alone tells about a company. */
export function profileFromDomain(domain: string): CompanyProfile {
  return {
    name: nameFromDomain(domain),
    description: null,
    product_description: null,
    industry: [],
    logo: null,
    links: { website: null },
    language: null,
    source: 'domain',
  };
}

export const LEGAL_FORMS =
  /\s*,?\s+\b(?:inc|incorporated|llc|llp|pllc|lp|p\.?c|p\.?a|ltd|limited|plc|corp|corporation|co|company|gmbh|ag|kg|se|sa|sas|sarl|srl|spa|bv|nv|ab|as|oy|kk|pty|group|holding|holdings)\.?$/i;

/** How well a piece of text names the company of `domain`: 0 (not at all) to 100 (exactly). */
export function domainMatchScore(text: string, domain: string): number {
  const domainKey = matchKey(companyLabel(domain));
  if (domainKey === '') return 0;
  const plain = scoreAgainst(text, domainKey);
  // A domain spells a name in Latin letters: umlauts written out (Müller → mueller.de), other scripts transliterated
  // (Вести Сочи → vesti-sochi.tv, یادمان → yadman.net, 淘宝 → taobao.com).
  const spelled = latinSpelling(text);
  return spelled === text ? plain : Math.max(plain, scoreAgainst(spelled, domainKey));
}

const HAN = /\p{Script=Han}/u;

/**
 * Text in Latin letters: other scripts transliterated (@sindresorhus/transliterate), Chinese characters in their
 * pinyin (tiny-pinyin: 淘宝网 → "tao bao wang"), which transliterate leaves as they are.
 */
export function latinSpelling(text: string): string {
  const spelled = transliterate(text);
  if (!HAN.test(spelled) || !TinyPinyin.isSupported()) return spelled;
  return collapseWhitespace(
    TinyPinyin.parse(spelled)
      .map((piece) => (piece.type === 2 ? ` ${piece.target.toLowerCase()} ` : piece.target))
      .join(''),
  );
}

/** The Chinese characters in `text` whose pinyin spells `target` (a domain's key): "淘宝" in "淘宝网 全球站" for "taobao". */
export function hanSpan(text: string, target: string): string | undefined {
  if (!HAN.test(text) || !TinyPinyin.isSupported()) return undefined;
  const chars = [...text];
  // Each character's pinyin once ("" for other characters, which end a name here).
  const syllables = chars.map((char) => (HAN.test(char) ? TinyPinyin.convertToPinyin(char, '', true) : ''));
  for (let start = 0; start < chars.length; start++) {
    let spelled = '';
    for (let end = start; end < chars.length && end - start < MAX_HAN_NAME_CHARS && syllables[end] !== ''; end++) {
      spelled += syllables[end];
      if (spelled === target) return chars.slice(start, end + 1).join('');
      if (!target.startsWith(spelled)) break;
    }
  }
  return undefined;
}

const MAX_HAN_NAME_CHARS = 8;
const MIN_ABBREVIATION_PIECE = 2;
const MAX_ABBREVIATED_WORDS = 12;
/** Pieces tried at most for one text: a hostile page of look-alike words cannot make the search long. */
const MAX_ABBREVIATION_STEPS = 300;

/**
 * Whether the domain abbreviates some of the text's words, in order: "golang" for "The Go Programming Language"
 * (go + lang), "natgeo" for "National Geographic". Two words at least, two letters of each at least, and one of them
 * cut short: whole words with others skipped between them ("Azureva, résidence vacances" for azureva-vacances.com)
 * are words the domain shares with a tagline, not an abbreviation.
 */
function abbreviatesWords(text: string, domainKey: string): boolean {
  const words = text.split(/\s+/).map(matchKey).filter(Boolean).slice(0, MAX_ABBREVIATED_WORDS);
  const failed = new Set<string>();
  let steps = 0;
  const from = (at: number, word: number, pieces: number, shortened: boolean): boolean => {
    if (at === domainKey.length) return pieces >= 2 && shortened;
    const state = `${at}:${word}:${shortened}`;
    if (word >= words.length || failed.has(state)) return false;
    for (let next = word; next < words.length; next++) {
      const candidate = words[next]!;
      for (let length = Math.min(candidate.length, domainKey.length - at); length >= MIN_ABBREVIATION_PIECE; length--) {
        if (++steps > MAX_ABBREVIATION_STEPS) return false;
        const cut = shortened || length < candidate.length;
        if (domainKey.startsWith(candidate.slice(0, length), at) && from(at + length, next + 1, pieces + 1, cut)) return true;
      }
    }
    failed.add(state);
    return false;
  };
  return domainKey.length >= 5 && from(0, 0, 0, false);
}

function initialsOf(text: string): string {
  return matchKey(
    text
      .split(/\s+/)
      .map((word) => word[0] ?? '')
      .join(''),
  );
}

function scoreAgainst(text: string, domainKey: string): number {
  const key = matchKey(text);
  if (key === '') return 0;
  if (key === domainKey) return 100;
  const bare = matchKey(text.replace(LEGAL_FORMS, ''));
  if (bare === domainKey) return 95;
  // One is the other's start, the name with or without its legal form ("Longo, Inc." for longolabs.com: "longo").
  for (const candidate of new Set([key, bare])) {
    if (candidate.length >= 3 && (candidate.startsWith(domainKey) || domainKey.startsWith(candidate))) {
      return Math.max(50, 90 - Math.abs(candidate.length - domainKey.length));
    }
  }
  if (domainKey.length >= 3 && key.includes(domainKey)) return Math.max(30, 70 - (key.length - domainKey.length));
  const initials = initialsOf(text);
  if (initials.length >= 2 && initials === domainKey) return 60;
  // A firm's initials and its legal form: "Katz Banks Kumin LLP" for kbkllp.com.
  const written = LEGAL_FORMS.exec(text);
  const firmInitials = written ? initialsOf(text.slice(0, written.index)) : '';
  if (firmInitials.length >= 2 && firmInitials + matchKey(written![0]) === domainKey) return 60;
  if (abbreviatesWords(text, domainKey)) return 55;
  // The legal form written into the domain ("abacusllc.com" for "Abacus Solutions, LLC"): the name's first words
  // spell the rest of the domain and the name ends with the same form, or spell a long enough rest alone
  // ("Stoneridge Homes Huntsville, AL" for stoneridgehomesinc.com).
  const form = DOMAIN_LEGAL_SUFFIX.exec(domainKey)?.[1];
  if (form) {
    const stem = domainKey.slice(0, -form.length);
    const words = text.split(/[\s,]+/).filter(Boolean);
    if (stem.length >= 3 && key.startsWith(stem) && matchKey(words[words.length - 1] ?? '') === form) return 60;
  }
  const stemAlone = domainStem(domainKey);
  if (stemAlone && key.startsWith(stemAlone)) return 55;
  return 0;
}

const DOMAIN_LEGAL_SUFFIX = /(llc|inc|ltd|corp|gmbh|plc|lda)$/;
const MIN_STEM_ALONE = 8;

/** The domain's key without the legal form written into it ("stoneridgehomesinc" → "stoneridgehomes"), if long enough. */
export function domainStem(domainKey: string): string | undefined {
  const form = DOMAIN_LEGAL_SUFFIX.exec(domainKey)?.[1];
  const stem = form ? domainKey.slice(0, -form.length) : '';
  return stem.length >= MIN_STEM_ALONE ? stem : undefined;
}

// A title's parts: "Acme — The best widgets", "Home | Acme", "Acme: widgets", "Acme - Start".
// « and » are quotes in many languages (ООО «Завод»), separators only between spaces.
const TITLE_SEPARATORS = /\s+[-–—~/:»«|·•]\s+|\s*-{2,}\s*|\s*[|·•–—]\s*|\s*::\s*|:\s+/u;
export const GENERIC_TITLE_PARTS = new RegExp(
  '^(?:home|home ?page|start|start ?page|startseite|accueil|inicio|início|welcome|willkommen|bienvenue|bienvenido|' +
    'benvenuto|official (?:web)?site|offizielle (?:web)?seite|site officiel|sitio oficial|index|main page|' +
    'about|about us|über uns|ueber uns|unternehmen|company|à propos|a propos|qui sommes-nous|sobre nosotros|' +
    'chi siamo|over ons|products|produkte|produits|services|leistungen|solutions|contact|contact us|kontakt|' +
    'projects|testimonials|reviews|blog|news|gallery|faq|careers|jobs|team|our team|staff|' +
    'トップページ|トップ|ホーム|首页|主页|главная|главная страница|홈)$',
  'iu',
);
export const WELCOME_PREFIX = /^(?:welcome to|willkommen bei|willkommen auf|bienvenue (?:chez|sur|à)|bienvenido a|benvenuti (?:da|su|in))\s+/iu;
const MAX_TITLE_NAME_WORDS = 6;
const MAX_TITLE_NAME_CHARS = 60;

/** A title's parts, without "Welcome to" and without the parts that only name the page ("Home", "About us"). */
export function titleParts(title: string): string[] {
  const text = collapseWhitespace(title);
  if (text === '') return [];
  return (
    text
      .split(TITLE_SEPARATORS)
      // A separator left at either end by an empty part ("%page% ~ %site%" with no page name: " ~ Nong Thon Restaurant").
      .map((part) =>
        part
          .replace(/^[\s\-–—~/:|·•]+|[\s\-–—~/:|·•]+$/gu, '')
          .replace(WELCOME_PREFIX, '')
          .trim(),
      )
      .filter((part) => part !== '' && !GENERIC_TITLE_PARTS.test(part))
  );
}

/**
 * The company name inside a page title, or null when the title is only a tagline. Of a title's parts, the one
 * that matches the domain best wins; without a match, the shortest part that is not "Home" or the like.
 */
export function nameFromTitle(title: string, domain: string): string | null {
  const parts = titleParts(title);
  if (parts.length === 0) return null;

  let best: { part: string; score: number } | undefined;
  for (const part of parts) {
    const score = domainMatchScore(part, domain);
    if (score > 0 && (!best || score > best.score)) best = { part, score };
  }
  if (best) return best.part;

  const wordCount = (part: string) => part.split(/\s+/).length;
  const shortest = parts.reduce((a, b) => (wordCount(b) < wordCount(a) ? b : a));
  // A lone long phrase ("The best widgets for your workshop") is a tagline, not a name.
  if (wordCount(shortest) > MAX_TITLE_NAME_WORDS || shortest.length > MAX_TITLE_NAME_CHARS) return null;
  if (parts.length === 1 && wordCount(shortest) > 4) return null;
  return shortest;
}
