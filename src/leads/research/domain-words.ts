import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { setImmediate as turn } from 'node:timers/promises';

// A domain label written as one word ("acmewidgets") split into the words it is made of ("acme widgets"), for the
// one case where nothing on the site names the company and the domain is all there is.

/**
 * The wordninja list as the `wordsninja` package ships it (MIT): 126,000 English words from Wikipedia, most frequent
 * first. A word's cost is its Zipf cost, log(rank × log N), so the cheapest split is the likeliest sentence.
 */
let ranks: { rank: ReadonlyMap<string, number>; logSize: number } | undefined;

const WORDS_MODULE = 'wordsninja/words-en.json';

/**
 * The list, read on first use where it was not loaded before: 7 MB, and 150-250 ms of one thread, which is why the
 * server loads it before it listens (a worker thread reads it on first use).
 */
function wordRanks(): { rank: ReadonlyMap<string, number>; logSize: number } {
  if (!ranks) {
    const words = createRequire(import.meta.url)(WORDS_MODULE) as string[];
    ranks = { rank: new Map(words.map((word, index) => [word, index + 1])), logSize: Math.log(words.length) };
  }
  return ranks;
}

/** Whether the list is in memory (the server loads it before it listens). */
export function domainWordsLoaded(): boolean {
  return ranks !== undefined;
}

const WORDS_PER_TURN = 5_000;

/**
 * Loads the list without holding the event loop: the file read asynchronously and its strings taken a slice at a time
 * (it is a flat JSON array of plain words; parsed whole, it holds the loop 60-100 ms).
 */
export async function preloadDomainWords(): Promise<void> {
  if (ranks) return;
  const text = await readFile(createRequire(import.meta.url).resolve(WORDS_MODULE), 'utf8');
  if (text.includes('\\')) {
    wordRanks(); // escapes, which the slices below do not read: parsed whole
    return;
  }
  const rank = new Map<string, number>();
  for (const [, word] of text.matchAll(/"([^"]*)"/g)) {
    rank.set(word!, rank.size + 1);
    if (rank.size % WORDS_PER_TURN === 0) await turn();
  }
  ranks ??= { rank, logSize: Math.log(rank.size) };
}
const MAX_WORD_LENGTH = 20;
const MAX_LABEL_LENGTH = 40;

/** Short words a compound name may hold ("skinbylovely"; "co" as in "slidingdoorco"); other pieces of one or two letters are noise. */
export const CONNECTORS: ReadonlySet<string> = new Set(['by', 'of', 'and', 'the', 'my', 'for', 'on', 'at']);
/** A three-letter piece must be a common word ("dog", "ink"), not a fragment of a brand ("med" + "tronic"). */
const MAX_SHORT_WORD_RANK = 10_000;
/** The split's words must be ordinary words on the whole: a geometric mean rank beyond this is a made-up name. */
const MAX_MEAN_RANK = 50_000;
const MAX_WORDS = 4;

/**
 * The list keeps few plurals ("widget" but not "widgets"), so the last word may be a plural of a listed one; only the
 * last, or "unforgettablesmile" would read "unforgettables mile".
 */
function rankOf(piece: string, last: boolean): number | undefined {
  const { rank } = wordRanks();
  const found = rank.get(piece);
  if (found !== undefined || !last || piece.length <= 3 || !piece.endsWith('s')) return found;
  return rank.get(piece.slice(0, -1));
}

function cheapestSplit(label: string): string[] | undefined {
  const cost: number[] = [0];
  const start: number[] = [0];
  for (let end = 1; end <= label.length; end++) {
    cost[end] = Infinity;
    for (let begin = Math.max(0, end - MAX_WORD_LENGTH); begin < end; begin++) {
      const rank = rankOf(label.slice(begin, end), end === label.length);
      if (rank === undefined || cost[begin] === Infinity) continue;
      const total = cost[begin] + Math.log(rank * wordRanks().logSize);
      if (total < cost[end]) {
        cost[end] = total;
        start[end] = begin;
      }
    }
  }
  if (cost[label.length] === Infinity) return undefined;
  const words: string[] = [];
  for (let end = label.length; end > 0; end = start[end]) words.unshift(label.slice(start[end], end));
  return words;
}

function plausibleWord(word: string): boolean {
  if (CONNECTORS.has(word) || word === 'co' || word.length >= 4) return true;
  return word.length === 3 && (wordRanks().rank.get(word) ?? Infinity) <= MAX_SHORT_WORD_RANK;
}

/**
 * The words a lower-case label is written as, or the label alone when it is not plainly a compound of common words:
 * "focusfurnishing" → ["focus", "furnishing"], "skinbylovely" → ["skin", "by", "lovely"], "medtronic", "etsy" and
 * "tag44" stay whole.
 */
export function labelWords(label: string): string[] {
  if (!/^[a-z]+$/.test(label) || label.length > MAX_LABEL_LENGTH) return [label];
  const words = cheapestSplit(label);
  // A name does not end on a connector: "spinkat" is no "Spink at".
  if (!words || words.length < 2 || words.length > MAX_WORDS || !words.every(plausibleWord) || CONNECTORS.has(words.at(-1)!)) {
    return [label];
  }
  const meanLogRank = words.reduce((sum, word, index) => sum + Math.log(rankOf(word, index === words.length - 1)!), 0) / words.length;
  return meanLogRank <= Math.log(MAX_MEAN_RANK) ? words : [label];
}
