import { collapseWhitespace } from '../../content/text.js';
import { matchKey, wordCount } from './clean-text.js';
import {
  companyLabel,
  domainMatchScore,
  domainStem,
  GENERIC_TITLE_PARTS,
  hanSpan,
  latinSpelling,
  LEGAL_FORMS,
  registrableDomain,
  titleParts,
} from './name.js';
import { labelWords } from './domain-words.js';

// The company name from what a whole page shows, not from one tag: a title's parts are checked against the domain
// and against what else the page says of its owner (logo text, copyright line, author, description), and a
// one-word domain is split where the page's own text writes it in words ("acmewidgets.com" → "Acme Widgets").

/** What a page says about who owns it, gathered by extractCompany. */
export interface NameEvidence {
  /** Texts that name the owner on purpose: meta author and copyright, DC.title, logo alt and title, copyright lines. */
  strong: string[];
  /** Who the copyright lines and the author meta tag name. */
  holders: string[];
  /** The page's descriptions (meta, OpenGraph, Twitter). */
  descriptions: string[];
  /** First-level headings. */
  headings: string[];
  /** Everything else a reader sees (body text, other meta content), searched for the domain written as words. */
  text: string;
  /** Link targets (href values): their slugs and handles ("skin-by-lovely", "SkinByLovely") spell the domain too. */
  links: string[];
  /** The body text alone (no copies of the title): a name the page's own text uses backs a title's reading of it. */
  body?: string;
}

const bodyKeys = new WeakMap<NameEvidence, string>();

function bodyKey(evidence: NameEvidence): string {
  let key = bodyKeys.get(evidence);
  if (key === undefined) {
    key = phraseKey(evidence.body ?? '');
    bodyKeys.set(evidence, key);
  }
  return key;
}

export const NO_EVIDENCE: NameEvidence = { strong: [], holders: [], descriptions: [], headings: [], text: '', links: [] };

/** Words that end a company name ("Bare Bones Consulting"), kept after the words that spell the domain. */
const COMPANY_WORDS = new Set([
  'consulting',
  'consultants',
  'group',
  'firm',
  'partners',
  'associates',
  'solutions',
  'services',
  'systems',
  'company',
  'studio',
  'studios',
  'labs',
  'agency',
  'products',
  'productions',
  'industries',
  'international',
  'holdings',
  'technologies',
  'enterprises',
  'ventures',
  'capital',
]);
const LEGAL_FORM_WORD =
  /^(?:inc|incorporated|llc|llp|ltd|limited|plc|corp|corporation|co|gmbh|ag|kg|se|sa|sas|sarl|srl|spa|bv|nv|ab|as|oy|kk|pty)\.?,?$/i;
/** Legal forms written before the name (ООО «Завод», 株式会社サクラ精機), dropped when comparing. */
const LEGAL_PREFIX = /^(?:ооо|оао|зао|пао|ао|株式会社|有限会社)\s*/iu;
/** Page words a title part may carry around the name: "Contact Balise Collision Repair", "Win Pearl. Testimonials". */
const PAGE_WORDS = '(?:contact(?:\\s+us)?|about(?:\\s+us)?|home(?:\\s*page)?|testimonials|reviews|blog|projects|gallery|faq|staff)';
/** …and the words that say where the site sells: "Online at Book People", "Shop online at Acme". */
const LEADING_PAGE_WORDS = new RegExp(`^(?:${PAGE_WORDS}\\s*[.:,]?|(?:(?:shop|buy)\\s+)?online\\s+at|shop\\s+at)\\s+(?=\\S)`, 'iu');
const TRAILING_PAGE_WORDS = new RegExp(`(?<=\\S)\\s*[.:,]?\\s+${PAGE_WORDS}$`, 'iu');
const NO_SPACE_SCRIPT = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]/u;
const MAX_SPAN_WORDS = 6;
/** The most words a longer form of the name the domain spells may have ("San Lameer Resort Hotel & Spa"). */
const MAX_LONGER_NAME_WORDS = 8;
const MAX_TEXT_CHARS = 200_000;

/** A comparison key that keeps word breaks: "H&S Solicitors, Ltd." → "h and s solicitors ltd". */
export function phraseKey(text: string): string {
  return (
    text
      .normalize('NFKD')
      .replace(/\p{M}+/gu, '')
      .toLowerCase()
      // A possessive is one word, written with or without its apostrophe: "Shisler's Cheese House", "Shislers".
      .replace(/(?<=\p{L})['’]s\b/gu, 's')
      .replace(/&/g, ' and ')
      .replace(/[^\p{L}\p{N}]+/gu, ' ')
      .trim()
  );
}

function bareName(text: string): string {
  return text
    .replace(LEGAL_PREFIX, '')
    .replace(LEGAL_FORMS, '')
    .replace(/^[«"“„'‘]+|[»"”'’]+$/gu, '')
    .trim();
}

function containsPhrase(haystack: string, needle: string): boolean {
  if (needle === '') return false;
  return ` ${haystack} `.includes(` ${needle} `);
}

/**
 * How strongly the page backs a piece of a title as its owner's name: 3 when a logo, copyright line, author or
 * site name says it, 2 when a description starts with it, 1 when a description or a heading mentions it, else 0.
 * A part of one word counts only where it stands as a name (the whole text, or its first word), not where a
 * phrase merely contains it.
 * A description that is only the title again ("Latest News" twice) backs nothing; spacing is forgiven
 * ("MDPWoodWorks & Design" is backed by "© MDP Woodworks & Design").
 */
export function corroboration(part: string, evidence: NameEvidence): number {
  const keys = [...new Set([phraseKey(part), phraseKey(bareName(part))])].filter((key) => key !== '');
  if (keys.length === 0) return 0;
  const squashed = keys.map((key) => key.replace(/ /g, '')).filter((key) => key.length >= 3);
  // One word ("London", "Bedroom") is a name only where it stands as one: the whole text or its first word. A logo's
  // "bedroom furniture london" mentions a place, it does not name the owner "London".
  const oneWord = keys.every((key) => !key.includes(' ') && !NO_SPACE_SCRIPT.test(key));
  const mentions = (text: string) => {
    const full = phraseKey(text);
    const squash = full.replace(/ /g, '');
    if (oneWord) {
      const bare = phraseKey(bareName(text));
      return keys.some((key) => full === key || bare === key || full.startsWith(`${key} `));
    }
    return keys.some((key) => containsPhrase(full, key)) || squashed.some((key) => squash === key || squash.startsWith(key));
  };
  // A description backs the part only when it says more than the part.
  const longer = (text: string) => {
    const full = phraseKey(text);
    return !keys.includes(full) && full.split(' ').length > Math.max(...keys.map((key) => key.split(' ').length));
  };
  const startsWith = (text: string) => {
    const full = phraseKey(text);
    const squash = full.replace(/ /g, '');
    return (
      longer(text) &&
      (keys.some((key) => full.startsWith(`${key} `) || (NO_SPACE_SCRIPT.test(key) && full.startsWith(key))) ||
        squashed.some((key) => squash.startsWith(key)))
    );
  };
  if (evidence.strong.some(mentions)) return 3;
  if (evidence.descriptions.some(startsWith)) return 2;
  if (evidence.descriptions.some((text) => longer(text) && mentions(text)) || evidence.headings.some(mentions)) return 1;
  return 0;
}

/** "Thank you for your interest in Callows Audio!": the page's own text uses the title's longer form as a name. */
function writtenInBody(part: string, evidence: NameEvidence): boolean {
  const key = phraseKey(part);
  return key.includes(' ') && containsPhrase(bodyKey(evidence), key);
}

/**
 * The name a description starts with: its first words while they are capitalized ("First California Mortgage
 * offers …" → "First California Mortgage"), joined by "&", "and", "of".
 */
export function leadingName(text: string): string | undefined {
  const words = collapseWhitespace(text).split(' ');
  const taken: string[] = [];
  for (const word of words.slice(0, 8)) {
    if (/^[\p{Lu}\p{N}]/u.test(word) || (taken.length > 0 && /^(?:&|and|of|de|du|von|und)$/i.test(word))) {
      taken.push(word);
      if (/[,;:.!?)]$/.test(word) && !/^(?:\p{L}\.)+$/u.test(word) && !LEGAL_FORM_WORD.test(word)) break;
    } else break;
  }
  while (taken.length > 0 && /^(?:&|and|of|de|du|von|und)$/i.test(taken[taken.length - 1]!)) taken.pop();
  const name = trimName(taken.join(' ').replace(/[,;:.!?]+$/u, ''));
  return name === '' ? undefined : name;
}

/** Short texts that may be the owner's name: copyright holders, logo texts, author, the names descriptions start with. */
function nameCandidates(evidence: NameEvidence): string[] {
  const leading = evidence.descriptions.map(leadingName).filter((name): name is string => name !== undefined);
  return [...new Set([...evidence.holders, ...evidence.strong, ...leading])].filter((text) => text.split(/\s+/).length <= 8);
}

/**
 * The page's own name for the company that the domain abbreviates or spells ("Caltron Industries, Inc." for
 * caltronind.com, "First California Mortgage" for firstcal.net), among the texts that name the owner; when
 * `within` is given, only a name that the text contains.
 */
function relatedName(domain: string, evidence: NameEvidence, within?: string): string | undefined {
  let best: { name: string; score: number } | undefined;
  for (const candidate of nameCandidates(evidence)) {
    if (within !== undefined && !containsPhrase(phraseKey(within), phraseKey(candidate))) continue;
    const score = domainMatchScore(candidate, domain);
    if (score >= 50 && (!best || score > best.score)) best = { name: candidate, score };
  }
  if (!best) return undefined;
  return within === undefined ? withoutTagline(best.name, domain, evidence) : best.name;
}

/**
 * A name the page gives its owner, cut to the words that spell the domain when the rest is a tagline the page says
 * only once: "© 2014 MotoClassifieds.US Free Automotive Advertising" → "MotoClassifieds.US". A longer form the page
 * repeats ("Peace Arch Business Center" in the logo, the text and the footer) is kept.
 */
function withoutTagline(name: string, domain: string, evidence: NameEvidence): string {
  const span = domainSpan(name, domain);
  if (!span || span === name) return name;
  // "San Lameer Hotel & Spa": a name joined on by "&" or "and" is the same name, not a tagline.
  if (JOINED_NAME.test(textAfter(name, span))) return name;
  const key = phraseKey(name);
  const uses = ` ${bodyKey(evidence)} `.split(` ${key} `).length - 1;
  if (uses >= 2) return name;
  // "Navštiv Zoover, nezávislý portál …" ("Visit Zoover, …"): capitalized words before the domain's name at the start
  // of a description open its sentence; that description backs no longer name.
  const wordsBefore = !key.startsWith(phraseKey(span));
  const described = evidence.descriptions.some((text) => containsPhrase(phraseKey(text), key) && !(wordsBefore && leadingName(text) === name));
  return described ? name : span;
}

const JOINED_NAME = /^(?:&|and)\s+\p{Lu}\p{L}*(?:\s+\p{Lu}\p{L}*)?$/u;

/** What follows `span` in `text`: "& Spa" after "San Lameer Hotel" in "San Lameer Hotel & Spa". */
function textAfter(text: string, span: string): string {
  return text.slice(text.indexOf(span) + span.length).trim();
}

interface Token {
  text: string;
  key: string;
  /** The key with "&" read as "and" (H&S → hands). */
  andKey: string;
  /** The word ends a sentence ("… the right place to call. Paul is …"): a name does not run on past it. */
  ends?: boolean;
}

/** A sentence's end after a word: "?", "!", ";" or ":", or a full stop after a lower-case word ("call.", not "Co."). */
function endsSentence(raw: string, word: string): boolean {
  return /[!?;:]["'”’)]*$/u.test(raw) || (/\.["'”’)]*$/u.test(raw) && /^\p{Ll}{2,}$/u.test(word));
}

function tokenize(text: string): Token[] {
  return text
    .split(/\s+/)
    .map((raw) => {
      const trimmed = raw.replace(/^[^\p{L}\p{N}&]+/u, '').replace(/[^\p{L}\p{N}&.]+$/u, '');
      // Initials keep their full stops ("R.S."); a sentence's full stop goes.
      const word = /^(?:\p{L}\.)+$/u.test(trimmed) ? trimmed : trimmed.replace(/\.+$/, '');
      return { word, ends: endsSentence(raw, word) };
    })
    .filter(({ word }) => word !== '')
    .map(({ word, ends }) => ({ ...wordToken(word), ends }));
}

function wordToken(text: string): Token {
  return { text, key: matchKey(text), andKey: matchKey(text.replace(/&/g, 'and')) };
}

function withoutPossessive(token: Token): Token {
  const text = token.text.replace(/(?<=\p{L})['’]s$/u, '');
  return text === token.text ? token : { ...token, ...wordToken(text) };
}

const NON_LATIN_LETTER = /(?!\p{Script=Latin})\p{L}/u;
/** Names, titles and descriptions are read transliterated too; a page's whole text is not (a few µs a word). */
const MAX_TRANSLITERATED_CHARS = 2000;

function transliteratedToken(token: Token): Token {
  if (!NON_LATIN_LETTER.test(token.text)) return token;
  return { ...token, ...wordToken(latinSpelling(token.text)), text: token.text };
}

/** A word that is the site's address ("MotoClassifieds.US", "BlueDogInk.com") spells the domain's label. */
function withoutAddressSuffix(token: Token, domain: string): Token {
  const registrable = registrableDomain(domain);
  const suffix = registrable.slice(registrable.indexOf('.'));
  if (!suffix.startsWith('.') || !token.text.toLowerCase().endsWith(suffix) || token.text.length <= suffix.length) return token;
  const key = matchKey(token.text.slice(0, -suffix.length));
  return { ...token, key, andKey: key };
}

/** The run of words (start, end) whose letters spell `target`, or undefined. */
function findSpan(tokens: Token[], target: string, minWords: number): [number, number] | undefined {
  for (let start = 0; start < tokens.length; start++) {
    let plain = '';
    let withAnd = '';
    for (let end = start; end < tokens.length && end - start < MAX_SPAN_WORDS; end++) {
      plain += tokens[end]!.key;
      withAnd += tokens[end]!.andKey;
      if (plain === '' && withAnd === '') break;
      if ((plain === target || withAnd === target) && end - start + 1 >= minWords) return [start, end];
      if (!target.startsWith(plain) && !target.startsWith(withAnd)) break;
      if (tokens[end]!.ends) break;
    }
  }
  return undefined;
}

/**
 * The words of `text` that spell the domain, with the company words and legal form that follow them:
 * "Office Supplies at Office Depot" → "Office Depot", "Bare Bones Consulting" → "Bare Bones Consulting".
 */
export function domainSpan(text: string, domain: string, minWords = 1): string | undefined {
  const target = matchKey(companyLabel(domain));
  if (target === '') return undefined;
  let tokens = tokenize(text).map((token) => withoutAddressSuffix(token, domain));
  // The legal form written into the domain may be missing from the name ("Stoneridge Homes" for stoneridgehomesinc.com).
  const stem = domainStem(target);
  let span = findSpan(tokens, target, minWords) ?? (stem ? findSpan(tokens, stem, minWords) : undefined);
  if (!span) {
    // "Welcome to Microsoft's Homepage": the possessive belongs to the sentence when the domain spells the name without it.
    const bare = tokens.map(withoutPossessive);
    span = findSpan(bare, target, minWords);
    if (span) tokens = bare;
  }
  if (!span && text.length <= MAX_TRANSLITERATED_CHARS && NON_LATIN_LETTER.test(text)) {
    // A name in another script spells the domain transliterated ("Интернет-магазин «Спортмастер»" → "Спортмастер").
    span = findSpan(tokens.map(transliteratedToken), target, minWords);
  }
  // A name in Chinese characters spells the domain in pinyin, with no spaces to split its words ("淘宝" for taobao.com).
  if (!span) return minWords === 1 ? hanSpan(text, target) : undefined;
  let [start, end] = span;
  if (start > 0 && /^the$/i.test(tokens[start - 1]!.text)) start--;
  while (end + 1 < tokens.length && (COMPANY_WORDS.has(tokens[end + 1]!.key) || LEGAL_FORM_WORD.test(tokens[end + 1]!.text))) end++;
  return trimName(
    tokens
      .slice(start, end + 1)
      .map((token) => token.text)
      .join(' '),
  );
}

/**
 * A site name that runs on past the words that spell the domain ("Enterkomputer Toko Rakit PC" in JSON-LD) while the
 * title calls the site by those words alone ("Enterkomputer - Toko Komputer, …"): the rest is a tagline.
 */
export function shortNameTheTitleUses(name: string, title: string, domain: string): string {
  const span = domainSpan(name, domain);
  // "Markup & Co", "San Lameer Hotel & Spa": a name joined on is the same name.
  if (!span || !phraseKey(name).startsWith(`${phraseKey(span)} `) || JOINED_NAME.test(textAfter(name, span))) return name;
  return titleParts(title).some((part) => phraseKey(part) === phraseKey(span)) ? span : name;
}

/** A name that is the site's own address, with its suffix ("Mindfactory.de", "dhd24.com"). */
function isSiteAddress(name: string, domain: string): boolean {
  return !/\s/.test(name) && name.replace(/^www\./i, '').toLowerCase() === registrableDomain(domain);
}

/** The site's address as a logo, copyright line or author writes it, capitalized ("Bike-Locks.com"), if one does. */
function addressAsName(domain: string, evidence: NameEvidence): string | undefined {
  for (const text of evidence.strong) {
    for (const word of text.split(/\s+/)) {
      const address = word.replace(/^[^\p{L}\p{N}]+|[^\p{L}\p{N}]+$/gu, '');
      if (/\p{Lu}/u.test(address) && isSiteAddress(address, domain)) return withoutWww(address, domain);
    }
  }
  return undefined;
}

const PREPOSITION = /^(?:from|by|at|with|von|bei|chez|par|da|di)$/i;

/** "Transfection Kits from Altogen Biosystems" → "Altogen Biosystems", when `span` ("Altogen") follows a preposition. */
function nameAfterPreposition(part: string, span: string): string | undefined {
  const at = part.indexOf(span);
  if (at <= 0) return undefined;
  const before = part.slice(0, at).trim().split(/\s+/);
  return PREPOSITION.test(before[before.length - 1] ?? '') ? trimName(part.slice(at)) : undefined;
}

/** What the page says of its owner, then the rest of its text. */
function ownerTextsThenText(evidence: NameEvidence): string[] {
  return [...evidence.strong, ...evidence.descriptions, ...evidence.headings, evidence.text.slice(0, MAX_TEXT_CHARS)];
}

/** The domain written as words in what the page says of its owner, or else in its text. */
function spelledInPage(domain: string, evidence: NameEvidence): string | undefined {
  for (const text of ownerTextsThenText(evidence)) {
    const span = domainSpan(text, domain, 2);
    if (span) return span;
  }
  return undefined;
}

/**
 * A name run together in lower case ("floridahospital") as the page writes it elsewhere in words ("© 2014 Florida
 * Hospital"); else as it is.
 */
function respelled(name: string, evidence: NameEvidence): string {
  if (!/^[\p{Ll}\p{N}]+$/u.test(name)) return name;
  const target = matchKey(name);
  for (const text of ownerTextsThenText(evidence)) {
    const tokens = tokenize(text);
    const span = findSpan(tokens, target, 2);
    if (span)
      return trimName(
        tokens
          .slice(span[0], span[1] + 1)
          .map((token) => token.text)
          .join(' '),
      );
  }
  return name;
}

/** A site's label, not its name: "Official UK Chicco website", "Acme Online Shop". */
const SITE_LABEL = /^official\s|\s(?:web\s?site|site|home\s?page|online\s+(?:shop|store))$/iu;
/** Where the company is, after its name: "Huntsville, AL", "in Austin, TX". */
const PLACE_SUFFIX = /^(?:in\s+)?\p{Lu}[\p{L}.'-]*(?:\s+\p{Lu}[\p{L}.'-]*){0,2},\s*\p{Lu}{2}\.?$/u;
const QUOTED_NAME = /[«“"]([^«»“”"]{2,60})[»”"]/gu;
const INITIALS_SKIPPED = /^(?:&|and|of|the|for)$/i;

/**
 * "Перевізник Vilartrans" in a title, where a sentence of the page says "автобусний перевізник Vilartrans": the word
 * before the name is a common noun ("carrier") the title capitalizes as its first word.
 */
function commonNounBefore(longer: string, span: string, evidence: NameEvidence): boolean {
  const at = longer.indexOf(span);
  if (at <= 0 || textAfter(longer, span).trim() !== '') return false;
  const before = longer.slice(0, at).trim();
  if (!/^\p{Lu}/u.test(before) || /^the$/i.test(before)) return false;
  const written = `${before.charAt(0).toLowerCase()}${before.slice(1)} ${span}`;
  return [...evidence.descriptions, evidence.text.slice(0, MAX_TEXT_CHARS)].some((text) => collapseWhitespace(text).includes(written));
}

/** "Dublin Core® Metadata Initiative (DCMI)" → "Dublin Core Metadata Initiative": the name its initials follow. */
function withoutOwnInitials(text: string): string | undefined {
  const match = /^(.+?)\s*\((\p{Lu}{2,8})\)$/u.exec(text.trim());
  if (!match) return undefined;
  const name = match[1]!.replace(/[®™]/gu, '');
  const initials = name
    .split(/\s+/)
    .filter((word) => !INITIALS_SKIPPED.test(word))
    .map((word) => word.charAt(0).toUpperCase())
    .join('');
  return initials === match[2] ? trimName(name) : undefined;
}

function trimName(name: string): string {
  return name.replace(/[\s,;:–—-]+$/u, '').trim();
}

/** "Contact Balise Collision Repair" → "Balise Collision Repair"; "Win Pearl. Testimonials" → "Win Pearl". */
function withoutPageWords(part: string): string {
  const stripped = part.replace(LEADING_PAGE_WORDS, '').replace(TRAILING_PAGE_WORDS, '').trim();
  return stripped === '' || GENERIC_TITLE_PARTS.test(stripped) ? part : stripped;
}

/** Where East Asian writing and Latin letters meet with no space: "익산몰iksanmall.com" is the name and the address. */
const SCRIPT_CHANGE =
  /(?<=[\p{Script=Hangul}\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}])(?=\p{Script=Latin})|(?<=\p{Script=Latin})(?=[\p{Script=Hangul}\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}])/gu;

/**
 * Who a copyright line names: "© 2004-2013 Masterpiece Tri-State. All Rights Reserved." → "Masterpiece Tri-State",
 * "Copyright © 2012 by Office Depot, Inc. All rights reserved." → "Office Depot, Inc".
 */
export function copyrightHolders(text: string, max = 3): string[] {
  const holders: string[] = [];
  // A notice broken over two lines of the page's source ("© 2009 Shisler's Cheese⏎House. All rights reserved.").
  // (The spaces are taken atomically, through a captured look-ahead, so that a long run of them is read once.)
  const joined = text.replace(/\n(?=([ \t]*))\1(?=[^\n|©]{0,60}\ball rights reserved\b)/giu, ' ');
  const notice = /(?:©|&copy;|\(c\)|\bcopyright\b)((?:[\s©]|\(c\)|\bcopyright\b|(?:19|20)\d{2}|[-–,.]|\bby\b)*)([^|\n©]{2,120})/giu;
  for (const match of joined.matchAll(notice)) {
    let holder = match[2]!;
    holder = holder.split(/\ball rights reserved\b|\bpowered by\b/i)[0]!;
    // The notice's sentence ends at a full stop after a word of three letters or more ("Tri-State. All", not "R.S. Pressman").
    const end = /(?<=[\p{L}\p{N}]{3,})\.\s+(?=\p{Lu})/u.exec(holder);
    if (end && !LEGAL_FORM_WORD.test(holder.slice(0, end.index).split(/\s+/).pop() ?? '')) holder = holder.slice(0, end.index);
    // "W3C® (MIT, ERCIM," when the notice goes on past the line: the marks and an unclosed parenthesis are not the name.
    holder = holder
      .replace(/[®™℠]/gu, '')
      // "キャラクターショーファンサイト(charactershow.jp)": the site's address after the name.
      .replace(/\s*\((?:www\.)?[\p{L}\p{N}-]+(?:\.[\p{L}\p{N}-]+)+\)\s*$/u, '')
      .replace(/\s*\([^)]*$/u, '')
      .replace(SCRIPT_CHANGE, ' ');
    holder = collapseWhitespace(holder.replace(/(?:[\s,.;:–-]|(?:19|20)\d{2})+$/u, ''));
    if (holder.length >= 2 && /\p{L}/u.test(holder) && !holders.includes(holder)) holders.push(holder);
    if (holders.length >= max) break;
  }
  return holders;
}

/**
 * The company name in a page title, judged with what the page says of itself. The part that matches the domain
 * wins, cut to the words that spell the domain unless the page backs the longer form; without a match, the copyright
 * holder or author when a part names them, else the part the page backs best. Null when no part is backed: a title
 * of taglines and page names ("Land for sale | Colorado") names nobody.
 */
export function nameFromTitleWithEvidence(title: string, domain: string, evidence: NameEvidence): string | null {
  const parts = titleParts(title).flatMap((part) => [...new Set([withoutPageWords(part), part])]);
  if (parts.length === 0) return null;

  let best: { part: string; score: number } | undefined;
  for (const part of parts) {
    const score = domainMatchScore(part, domain);
    if (score > 0 && (!best || score > best.score)) best = { part, score };
  }
  if (best) {
    const span = domainSpan(best.part, domain);
    if (span) {
      // The site's address is a whole name: "Link-Verzeichnis spid-pro.de" → "spid-pro.de".
      if (isSiteAddress(span, domain)) return span;
      if (span === best.part) return addressAsName(domain, evidence) ?? span;
      // The longer form only when the page backs it at least as well as the words that spell the domain; after
      // "from", "by", "von"… the longer form is the rest of the part ("… Kits from Altogen Biosystems").
      const longer = nameAfterPreposition(best.part, span) ?? best.part;
      // "Dublin Core® Metadata Initiative (DCMI)": a name followed by its own initials is the full name.
      const abbreviated = withoutOwnInitials(longer);
      if (abbreviated) return abbreviated;
      // "Official UK Chicco website" labels the site; "Stoneridge Homes Huntsville, AL" adds where it is.
      if (SITE_LABEL.test(longer) || PLACE_SUFFIX.test(textAfter(longer, span)) || commonNounBefore(longer, span, evidence)) return span;
      const full = corroboration(longer, evidence) || (writtenInBody(longer, evidence) ? 1 : 0);
      // A part of a dozen words is a sentence around the name, however often the page says it.
      if (full > 0 && full >= corroboration(span, evidence) && wordCount(longer) <= MAX_LONGER_NAME_WORDS) return longer;
      // Only the domain's words ("Bike Locks, Kryptonite, Abus") under a logo or copyright line that calls the site
      // by its address ("© 2010 Bike-Locks.com"): the address is the name.
      return addressAsName(domain, evidence) ?? span;
    }
    // The part spells only the domain's first words ("Wall Decor" for walldecorandhomeaccents.com): the page may
    // write all of them ("Wall Decor and Home Accents").
    if (matchKey(companyLabel(domain)).startsWith(matchKey(best.part))) {
      const whole = spelledInPage(domain, evidence);
      if (whole) return whole;
    }
    if (best.score >= 50) return respelled(best.part, evidence);
    // The domain is only inside the part, not as whole words ("… at First California Mortgage" for firstcal.net).
    return relatedName(domain, evidence, best.part) ?? best.part;
  }

  for (const holder of evidence.holders.filter((text) => text.length <= 80)) {
    const key = phraseKey(bareName(holder));
    if (key.split(' ').length >= 2 && parts.some((part) => containsPhrase(phraseKey(part), key))) return holder;
  }
  // The title starts with the name the logo gives: "Charles Tyrwhitt for Men's Shirts…" under the logo "Charles
  // Tyrwhitt – Jermyn Street London".
  for (const text of evidence.strong) {
    const logoName = trimName(titleParts(text)[0] ?? '');
    const key = phraseKey(bareName(logoName));
    const words = key.split(' ').length;
    if (key === '' || words < 2 || words > MAX_SPAN_WORDS) continue;
    if (parts.some((part) => `${phraseKey(part)} `.startsWith(`${key} `))) return logoName;
  }

  // A title of product names ("Car Loans | Car Finance") while the logo or copyright line names the domain's owner.
  const owner = relatedName(domain, evidence);
  if (owner) return withoutWww(owner, domain);

  // A name in quotes is a name: a title part of it alone ("Сумки оптом … | «S-Style» - Сумки и аксессуары"), or
  // one the page's text repeats ("… Коммерческая недвижимость. Группа компаний "Континент-Недвижимость"").
  for (const part of parts) {
    for (const [quote, name] of part.matchAll(QUOTED_NAME)) {
      if (quote === part || containsPhrase(bodyKey(evidence), phraseKey(name!))) return name!;
    }
  }

  const spacedWords = (part: string) => part.split(/\s+/).length;
  let backed: { part: string; strength: number } | undefined;
  for (const part of parts) {
    if (spacedWords(part) > 8) continue;
    const strength = corroboration(part, evidence);
    if (strength === 0) continue;
    if (!backed || strength > backed.strength || (strength === backed.strength && spacedWords(part) < spacedWords(backed.part))) {
      backed = { part, strength };
    }
  }
  return backed?.part ?? practitioner(domain, [title, ...evidence.strong]) ?? null;
}

/**
 * A professional's name and credential: "Richard M. Dervin DDS", "Dr. Jane Smith, DMD", "John Roe, Esq."; MD, DO, DC
 * and OD only after a comma, as without one "… Baltimore MD" is a place.
 */
const PRACTITIONER =
  /(?:Dr\.?\s+)?\p{Lu}[\p{L}'’-]+\s+(?:\p{Lu}\.\s+)?(\p{Lu}[\p{L}'’-]+)(?:,\s*(?:MD|DO|DC|OD)|,?\s+(?:DDS|DMD|DVM|CPA|Esq\.?|Ph\.?D\.?))(?![\p{L}])/gu;
const MIN_SURNAME_LETTERS = 4;

/**
 * A practice named for its practitioner, whose surname the domain starts with: "Richard M. Dervin DDS" for
 * dervindental.com, written into a title of keywords with no separator ("Cosmetic Dentist Shawnee KS Richard M.
 * Dervin DDS").
 */
function practitioner(domain: string, texts: string[]): string | undefined {
  const label = matchKey(companyLabel(domain));
  for (const text of texts) {
    for (const match of text.matchAll(PRACTITIONER)) {
      const surname = matchKey(match[1]!);
      if (surname.length >= MIN_SURNAME_LETTERS && label.startsWith(surname)) return match[0];
    }
  }
  return undefined;
}

function capitalizeWords(words: string[]): string {
  const small = new Set(['by', 'and', 'of', 'the', 'for', 'at', 'in', 'on']);
  return words
    .map((word, i) => (i > 0 && small.has(word.toLowerCase()) ? word.toLowerCase() : word.charAt(0).toUpperCase() + word.slice(1)))
    .join(' ');
}

/**
 * The company name when no title names it, from what the page says of its owner: the domain written as words
 * ("Peakview Roofing" in a description for peakviewroofing.com, "H&S Solicitors" for handssolicitors.co.uk), a logo
 * or copyright name the domain abbreviates ("Caltron Industries, Inc." for caltronind.com), the domain in the body
 * text, a "skin-by-lovely" link slug or a "SkinByLovely" handle. A brand written as one word ("OpenSesame") is
 * taken as written.
 */
export function nameFromEvidence(domain: string, evidence: NameEvidence): string | undefined {
  const name = spelledName(domain, evidence);
  return name ? completedByDomain(withoutWww(name, domain), domain) : name;
}

/**
 * "Majestic" in the logo of majesticshowers.com: the domain writes the rest of the name, in common words of four
 * letters or more ("Majestic Showers"); "Contigo" stays for contigosf.com, "Blue Spoon" for bluespoonme.com.
 */
function completedByDomain(name: string, domain: string): string {
  const label = matchKey(companyLabel(domain));
  const key = matchKey(name);
  if (key === '' || key === label || !label.startsWith(key)) return name;
  const words = labelWords(label);
  let spelled = '';
  let taken = 0;
  while (taken < words.length && spelled.length < key.length) spelled += words[taken++];
  const rest = words.slice(taken);
  if (spelled !== key || rest.length === 0 || rest.some((word) => word.length < 4)) return name;
  return `${name} ${capitalizeWords(rest)}`;
}

/** "www.acme.com" in a copyright line is the site's address written with its host: the name is "acme.com". */
function withoutWww(name: string, domain: string): string {
  const address = name.replace(/^www\./i, '');
  return address !== name && address.toLowerCase() === registrableDomain(domain) ? address : name;
}

function spelledName(domain: string, evidence: NameEvidence): string | undefined {
  const target = matchKey(companyLabel(domain));
  if (target.length < 3) return undefined;
  const named = [...evidence.strong, ...evidence.descriptions, ...evidence.headings];
  for (const text of named) {
    const span = domainSpan(text, domain, 2);
    if (span) return span;
  }
  const related = relatedName(domain, evidence);
  if (related) return related;
  const texts = [...named, evidence.text.slice(0, MAX_TEXT_CHARS)];
  const bodySpan = domainSpan(evidence.text.slice(0, MAX_TEXT_CHARS), domain, 2);
  if (bodySpan) return bodySpan;
  const tokens = links(evidence).flatMap((link) => link.split(/[/?#=&.:@]+/));
  for (const token of tokens) {
    const words = token.split(/[-_+]+/).filter(Boolean);
    if (words.length < 2) continue;
    const span = findSpan(
      words.map((word) => ({ text: word, key: matchKey(word), andKey: matchKey(word) })),
      target,
      2,
    );
    if (span) return capitalizeWords(words.slice(span[0], span[1] + 1));
  }
  for (const token of tokens) {
    if (matchKey(token) !== target) continue;
    const words = token.split(/(?<=\p{Ll})(?=\p{Lu})/u);
    if (words.length >= 2) return capitalizeWords(words);
  }
  for (const text of texts) {
    const single = tokenize(text).find((token) => token.key === target && /\p{Ll}\p{Lu}|^\p{Lu}{2,}\p{Ll}/u.test(token.text));
    if (single) return single.text;
  }
  return repeatedOwnerName(domain, evidence);
}

/**
 * When nothing on the page spells the domain: the name a logo, copyright line or author gives the owner, if it holds
 * a word of the domain and the page's own text uses it as a name at least twice. callpaul.com's logo says "The Paul
 * Wilkinson Law Firm LLC - Car Wreck Lawyer in Denver, CO." and its text "The Paul Wilkinson Law Firm, LLC" four times.
 */
function repeatedOwnerName(domain: string, evidence: NameEvidence): string | undefined {
  const label = matchKey(companyLabel(domain));
  const body = ` ${bodyKey(evidence)} `;
  for (const text of [...evidence.holders, ...evidence.strong]) {
    for (const part of titleParts(text)) {
      const name = trimName(part);
      const key = phraseKey(name);
      const words = key.split(' ');
      if (words.length < 2 || words.length > 8) continue;
      if (!words.some((word) => word.length >= 4 && word !== label && label.includes(word))) continue;
      if (body.split(` ${key} `).length - 1 >= 2) return name;
    }
  }
  return undefined;
}

function links(evidence: NameEvidence): string[] {
  return evidence.links.slice(0, 2000);
}

/** A site name that is only the domain's label ("tampatelephoneandvoipsystems") says nothing the domain does not. */
export function isBareDomainLabel(name: string, domain: string): boolean {
  const text = name.trim();
  if (/\s/.test(text) || text !== text.toLowerCase()) return false;
  // A host name of the site ("zebra.acme.com", "www.acme.com") names the site, not the company.
  const host = text.replace(/\.$/, '');
  if (host === domain || host.endsWith(`.${domain}`)) return true;
  return matchKey(text) === matchKey(companyLabel(domain));
}

const NAME_CONNECTORS = /^(?:&|and|of|the|for|at|in|on|by|de|du|des|la|le|von|und|et|y)$/i;
const MAX_LONE_NAME_WORDS = 6;
/** Section titles of two words that name a page, not its owner: "Latest News", "Our Projects". */
const SECTION_TITLE = /^(?:latest|recent|our|company|all|new)\s+(?:news|posts|articles|updates|events|projects|products|services|work|offers)$/i;

/**
 * A title that is one clean name and nothing else ("Decatur Conference Center & Hotel", "Wedding Ministers & Officials
 * of Atlanta - Home"), for when nothing on the page backs any reading of it: a better name than the domain's label
 * run together ("Hoteldecatur"). Only a title of one part (after page words such as "Home" are dropped) whose words
 * are capitalized, two to six of them, with no sentence punctuation; one word, a section title ("Latest News"), a
 * tagline or a title of several parts names nobody for sure.
 */
export function loneTitleName(title: string, domain: string): string | undefined {
  const parts = [...new Set(titleParts(title).map(withoutPageWords))].filter((part) => !GENERIC_TITLE_PARTS.test(part));
  if (parts.length !== 1) return undefined;
  const name = trimName(parts[0]!);
  if (name === '' || isBareDomainLabel(name, domain) || /[!?;:…]|\.\s|["“”]/u.test(name)) return undefined;
  const words = name.split(/\s+/);
  // One word alone ("Kitchen") is as likely a page or product as a name; a section title names the page.
  if (words.length < 2 || words.length > MAX_LONE_NAME_WORDS || SECTION_TITLE.test(name)) return undefined;
  if (NAME_CONNECTORS.test(words[0]!)) return undefined;
  const capitalized = words.every((word) => NAME_CONNECTORS.test(word) || LEGAL_FORM_WORD.test(word) || /^[^\p{L}]*[\p{Lu}\p{Lt}\p{N}]/u.test(word));
  return capitalized && /\p{L}/u.test(name) ? name : undefined;
}
