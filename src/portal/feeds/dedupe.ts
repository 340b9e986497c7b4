import { createHash } from 'node:crypto';
import type { EntryWithoutKey } from './entries.js';
import type { EntryKeyKind, NormalizedEntry } from './types.js';

// The dedupe key of each entry: its guid, else its link, else a hash of its title and content. A guid or link
// that several entries of the same feed share identifies none of them, so those entries fall back to the next
// kind, as FreshRSS does for feeds that repeat guids.

export function contentHash(entry: Pick<EntryWithoutKey, 'title' | 'html' | 'summary'>): string {
  return createHash('sha256').update(`${entry.title}\n${entry.html || entry.summary}`).digest('hex');
}

function counts(values: (string | undefined)[]): Map<string, number> {
  const seen = new Map<string, number>();
  for (const value of values) if (value) seen.set(value, (seen.get(value) ?? 0) + 1);
  return seen;
}

export function assignKeys(entries: EntryWithoutKey[]): NormalizedEntry[] {
  const guids = counts(entries.map((entry) => entry.guid));
  const links = counts(entries.map((entry) => entry.link));
  return entries.map((entry) => {
    let key: string;
    let keyKind: EntryKeyKind;
    if (entry.guid && guids.get(entry.guid) === 1) [key, keyKind] = [entry.guid, 'guid'];
    else if (entry.link && links.get(entry.link) === 1) [key, keyKind] = [entry.link, 'link'];
    else [key, keyKind] = [contentHash(entry), 'hash'];
    return { key, keyKind, ...entry };
  });
}
