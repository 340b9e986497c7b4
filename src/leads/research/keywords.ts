import { MAX_KEYWORD_LENGTH, MAX_KEYWORDS } from './types.js';
import { cleanText, matchKey } from './clean-text.js';

// Industry keywords: what the site declares (meta keywords, JSON-LD), else the salient words of its description.

// Words of four letters or more (shorter ones are never picked) that say nothing about a business, in the
// languages company sites are most often written in.
const STOP_WORDS = new Set(
  [
    // English
    'about', 'above', 'after', 'again', 'against', 'also', 'always', 'among', 'another', 'any', 'around', 'because',
    'been', 'before', 'being', 'below', 'best', 'better', 'between', 'both', 'built', 'came', 'come', 'could',
    'does', 'doing', 'done', 'down', 'during', 'each', 'easy', 'either', 'even', 'ever', 'every', 'first', 'from',
    'further', 'get', 'gets', 'give', 'gives', 'great', 'have', 'having', 'help', 'helps', 'here', 'home', 'into',
    'just', 'know', 'leading', 'less', 'like', 'made', 'make', 'makes', 'many', 'more', 'most', 'much', 'must',
    'need', 'needs', 'never', 'only', 'other', 'others', 'over', 'own', 'page', 'people', 'same', 'should',
    'since', 'some', 'such', 'than', 'that', 'their', 'theirs', 'them', 'then', 'there', 'these', 'they', 'thing',
    'things', 'this', 'those', 'through', 'today', 'together', 'under', 'until', 'upon', 'very', 'want', 'well',
    'were', 'what', 'when', 'where', 'which', 'while', 'will', 'with', 'within', 'without', 'world', 'would',
    'year', 'years', 'your', 'yours', 'yourself', 'ours', 'welcome', 'website', 'official', 'site', 'company',
    'companies', 'everything', 'anything', 'something', 'work', 'works', 'working', 'ways', 'more', 'free', 'find',
    'learn', 'read', 'click', 'contact', 'team', 'teams', 'customers', 'customer', 'clients', 'client',
    // German
    'aber', 'alle', 'allem', 'allen', 'aller', 'alles', 'als', 'also', 'andere', 'anderen', 'auch', 'auf', 'aus',
    'bei', 'beim', 'bereits', 'bieten', 'bietet', 'bis', 'damit', 'dann', 'dass', 'dabei', 'dafür', 'deine',
    'deinen', 'deiner', 'denn', 'derer', 'deren', 'diese', 'diesem', 'diesen', 'dieser', 'dieses', 'doch', 'durch',
    'eine', 'einem', 'einen', 'einer', 'eines', 'etwa', 'etwas', 'euch', 'euer', 'für', 'ganz', 'gibt', 'haben',
    'hier', 'hinter', 'ihre', 'ihrem', 'ihren', 'ihrer', 'ihres', 'immer', 'jede', 'jedem', 'jeden', 'jeder',
    'jedes', 'jetzt', 'kann', 'keine', 'können', 'machen', 'mehr', 'mein', 'meine', 'mit', 'nach', 'neue', 'neuen',
    'nicht', 'noch', 'nur', 'oder', 'ohne', 'schon', 'sehr', 'seit', 'sein', 'seine', 'sich', 'sind', 'sowie',
    'über', 'unser', 'unsere', 'unserem', 'unseren', 'unserer', 'unter', 'viele', 'vielen', 'vom', 'von', 'wann',
    'warum', 'was', 'weil', 'welche', 'wenn', 'werden', 'wie', 'wieder', 'wird', 'wir', 'wollen', 'zum', 'zur',
    'zwischen', 'willkommen', 'unternehmen', 'startseite', 'ihnen', 'sie',
    // French
    'alors', 'aussi', 'autre', 'autres', 'avec', 'avoir', 'bien', 'cela', 'celle', 'celui', 'ces', 'cette',
    'chaque', 'chez', 'comme', 'dans', 'depuis', 'donc', 'elle', 'elles', 'encore', 'entre', 'être', 'faire',
    'leur', 'leurs', 'mais', 'même', 'nous', 'notre', 'nos', 'pour', 'plus', 'sans', 'sont', 'sous', 'tous',
    'tout', 'toute', 'toutes', 'très', 'votre', 'vous', 'bienvenue', 'entreprise', 'depuis',
    // Spanish, Portuguese, Italian
    'como', 'con', 'desde', 'donde', 'para', 'pero', 'porque', 'sobre', 'todo', 'todos', 'toda', 'todas', 'nuestra',
    'nuestro', 'nuestros', 'nuestras', 'somos', 'también', 'tiene', 'este', 'esta', 'estos', 'estas', 'empresa',
    'bienvenido', 'nosso', 'nossa', 'nossos', 'nossas', 'mais', 'muito', 'também', 'você', 'vocês', 'sempre',
    'della', 'delle', 'dello', 'degli', 'nella', 'nelle', 'nostro', 'nostra', 'nostri', 'nostre', 'sono', 'anche',
    'come', 'questo', 'questa', 'tutti', 'tutto', 'azienda', 'benvenuti',
    // Dutch
    'deze', 'door', 'onze', 'onder', 'voor', 'over', 'heeft', 'hebben', 'wordt', 'worden', 'zijn', 'naar', 'niet',
    'ook', 'welkom', 'bedrijf',
    // Russian
    'этот', 'эта', 'это', 'эти', 'который', 'которая', 'которые', 'наша', 'наши', 'наше', 'наших', 'нашей',
    'ваша', 'ваши', 'ваше', 'вашей', 'более', 'также', 'только', 'можно', 'есть', 'были', 'быть', 'будет', 'когда',
    'чтобы', 'если', 'очень', 'компания', 'компании', 'добро', 'пожаловать', 'лучшие', 'свои', 'своих', 'всех',
    'всего', 'всем', 'каждый',
    // legal forms
    'gmbh', 'corp', 'corporation', 'incorporated', 'limited', 'company', '株式会社', '有限会社', '合同会社',
  ].map((w) => w.toLowerCase()),
);

const CJK = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]/u;
const ONLY_HIRAGANA = /^\p{Script=Hiragana}+$/u;
const HAS_LETTER = /\p{L}/u;

const segmenters = new Map<string, Intl.Segmenter>();
function segmenterFor(language: string | null): Intl.Segmenter {
  const key = language ?? '';
  let segmenter = segmenters.get(key);
  if (!segmenter) {
    try {
      segmenter = new Intl.Segmenter(language ?? undefined, { granularity: 'word' });
    } catch {
      segmenter = new Intl.Segmenter(undefined, { granularity: 'word' });
    }
    if (segmenters.size < 50) segmenters.set(key, segmenter);
  }
  return segmenter;
}

/**
 * The most frequent telling words of a text, in order of frequency then of appearance. Words are cut by
 * Intl.Segmenter, so Japanese or Chinese text (no spaces) is handled; words naming the company are left out.
 */
export function salientWords(text: string, language: string | null, exclude: string[], limit = 5): string[] {
  const excluded = new Set<string>();
  for (const phrase of exclude) {
    excluded.add(matchKey(phrase));
    for (const { segment, isWordLike } of segmenterFor(language).segment(phrase)) if (isWordLike) excluded.add(matchKey(segment));
  }
  excluded.delete('');
  const counts = new Map<string, { count: number; first: number }>();
  let index = 0;
  for (const { segment, isWordLike } of segmenterFor(language).segment(text.slice(0, 5000))) {
    if (!isWordLike) continue;
    const word = segment.toLocaleLowerCase(language ?? undefined);
    if (!HAS_LETTER.test(word)) continue;
    if (CJK.test(word)) {
      if (Array.from(word).length < 2 || ONLY_HIRAGANA.test(word)) continue;
    } else if (Array.from(word).length < 4) {
      continue;
    }
    if (STOP_WORDS.has(word) || excluded.has(matchKey(word)) || word.length > MAX_KEYWORD_LENGTH) continue;
    const entry = counts.get(word);
    if (entry) entry.count++;
    else counts.set(word, { count: 1, first: index++ });
  }
  return [...counts.entries()]
    .sort((a, b) => b[1].count - a[1].count || a[1].first - b[1].first)
    .slice(0, limit)
    .map(([word]) => word);
}

/** Keywords as declared: trimmed, bounded, deduplicated ignoring case, at most MAX_KEYWORDS. */
export function normalizeKeywords(values: string[]): string[] {
  const seen = new Set<string>();
  const out: string[] = [];
  for (const value of values) {
    const keyword = cleanText(value, MAX_KEYWORD_LENGTH * 2).replace(/^[#"'“”«»]+|["'“”«».]+$/g, '');
    const key = keyword.toLocaleLowerCase();
    if (keyword.length < 2 || keyword.length > MAX_KEYWORD_LENGTH || /[<>]/.test(keyword) || seen.has(key)) continue;
    seen.add(key);
    out.push(keyword);
    if (out.length >= MAX_KEYWORDS) break;
  }
  return out;
}
