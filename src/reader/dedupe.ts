import { createHash } from 'node:crypto';
import type { EntryKeyKind, NormalizedEntry } from './types.js';

// The dedupe key of each entry, one article per (feed, key). Keys carry their kind (`guid:`, `link:`, `hash:`), so
// a guid equal to another entry's link is a different key.
//
// Which kind a feed's entries are keyed by is the feed's criterion, decided for the feed and not entry by entry
// (as FreshRSS does with its `hasBadGuids` / `unicityCriteria` feed attributes): under `guid` an entry is keyed by
// its guid, else its link, else a hash of its title and content; under `link` by its link, else the hash; under
// `hash` by the hash. A feed starts at `guid`. When two different entries of one fetch get the same key, the
// feed's identifiers identify nothing and the criterion steps down (guid -> link -> hash) until they are apart.
// The importer stores the criterion on the feed and never steps it back up: keying an entry one way in one fetch
// and another way in the next (because the entry that repeated its guid left the feed) would import it twice.

export function contentHash(entry: Pick<NormalizedEntry, 'title' | 'html' | 'summary'>): string {
  return createHash('sha256')
    .update(`${entry.title}\n${entry.html || entry.summary}`)
    .digest('hex');
}

const KEY_CRITERIA: readonly EntryKeyKind[] = ['guid', 'link', 'hash'];

type Keyed = Pick<NormalizedEntry, 'key' | 'keyKind' | 'guid' | 'link' | 'title' | 'html' | 'summary' | 'sourceHash'>;

function keyUnder(entry: Keyed, criterion: EntryKeyKind): [string, EntryKeyKind] {
  if (criterion === 'guid' && entry.guid) return [`guid:${entry.guid}`, 'guid'];
  if (criterion !== 'hash' && entry.link) return [`link:${entry.link}`, 'link'];
  return [`hash:${contentHash(entry)}`, 'hash'];
}

/**
 * Keys every entry (in place) under `criterion`, stepping it down while two different entries share a key, and
 * returns the criterion used. Entries identical in all the feed says about them (the same sourceHash) are the same
 * entry listed twice: that is no reason to step down (the importer keeps one of them).
 */
export function keyEntries(entries: Keyed[], criterion: EntryKeyKind = 'guid'): EntryKeyKind {
  let level = Math.max(0, KEY_CRITERIA.indexOf(criterion));
  for (;;) {
    const current = KEY_CRITERIA[level]!;
    const sources = new Map<string, string>();
    let clash = false;
    for (const entry of entries) {
      [entry.key, entry.keyKind] = keyUnder(entry, current);
      const source = sources.get(entry.key);
      if (source === undefined) sources.set(entry.key, entry.sourceHash);
      else if (source !== entry.sourceHash) clash = true;
    }
    if (!clash || level === KEY_CRITERIA.length - 1) return current;
    level += 1;
  }
}

/** Sets the key of every entry (in place), as for a feed seen for the first time, and returns them. */
export function assignKeys<T extends Keyed>(entries: T[], criterion: EntryKeyKind = 'guid'): T[] {
  keyEntries(entries, criterion);
  return entries;
}
