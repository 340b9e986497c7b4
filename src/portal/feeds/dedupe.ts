import { createHash } from 'node:crypto';
import type { FeedEntry } from './entries.js';
import type { EntryKeyKind, NormalizedEntry } from './types.js';

// The dedupe key of each entry: its guid, else its link, else a hash of its title and content. A guid or link
// that several entries of the same feed share identifies none of them, so those entries fall back to the next
// kind, as FreshRSS does for feeds that repeat guids.

export function contentHash(entry: Pick<NormalizedEntry, 'title' | 'html' | 'summary'>): string {
  return createHash('sha256').update(`${entry.title}\n${entry.html || entry.summary}`).digest('hex');
}

function counts(values: (string | undefined)[]): Map<string, number> {
  const seen = new Map<string, number>();
  for (const value of values) if (value) seen.set(value, (seen.get(value) ?? 0) + 1);
  return seen;
}

/** Sets the key of every entry (in place) and returns them. */
export function assignKeys(entries: FeedEntry[]): FeedEntry[] {
  const guids = counts(entries.map((entry) => entry.guid));
  const links = counts(entries.map((entry) => entry.link));
  for (const entry of entries) {
    let key: string;
    let keyKind: EntryKeyKind;
    if (entry.guid && guids.get(entry.guid) === 1) [key, keyKind] = [entry.guid, 'guid'];
    else if (entry.link && links.get(entry.link) === 1) [key, keyKind] = [entry.link, 'link'];
    // Only entries with neither a guid nor a link of their own are cleaned here, to hash what they say.
    else [key, keyKind] = [contentHash(entry), 'hash'];
    entry.key = key;
    entry.keyKind = keyKind;
  }
  return entries;
}
