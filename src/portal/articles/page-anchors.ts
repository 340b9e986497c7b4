// Where deep pages of a publication's articles begin, remembered so that the next read of a page near one seeks to it
// on the index instead of walking every entry before it (the page-number API of the spec means OFFSET).
//
// Only for the plain list in id order (no issue, no words, order by id), where an anchor can be proved still right:
// the list is a set of ids, and ids are never reused (migration 009), so the set is unchanged exactly while both
// its size (article_counts) and its highest id are. An insert raises the highest id for good; a delete lowers the
// size, and only an insert could raise it back, which raises the highest id. Any write, by this process or another
// instance, changes that version and with it every anchor of the publication. (An update never moves an article
// in this order.) The version is read from the database for each deep page, so nothing here can go stale.

/** An article's place in one publication's list, in one direction, at one version of the list. */
export interface Anchor {
  offset: number;
  id: number;
}

const MAX_LISTS = 1_000;
const MAX_ANCHORS_PER_LIST = 256;

export class PageAnchors {
  /** By publication and direction, most recently used last. */
  private readonly lists = new Map<string, { version: string; anchors: Anchor[] }>();

  /** The anchor at or nearest before `offset`, when the list is still at `version`. */
  nearest(list: string, version: string, offset: number): Anchor | undefined {
    const found = this.lists.get(list);
    if (!found || found.version !== version) return undefined;
    this.lists.delete(list);
    this.lists.set(list, found);
    let best: Anchor | undefined;
    for (const anchor of found.anchors) if (anchor.offset <= offset && (!best || anchor.offset > best.offset)) best = anchor;
    return best;
  }

  remember(list: string, version: string, anchor: Anchor): void {
    let found = this.lists.get(list);
    if (!found || found.version !== version) found = { version, anchors: [] };
    this.lists.delete(list);
    this.lists.set(list, found);
    if (found.anchors.some((known) => known.offset === anchor.offset)) return;
    if (found.anchors.length >= MAX_ANCHORS_PER_LIST) found.anchors.shift();
    found.anchors.push(anchor);
    if (this.lists.size > MAX_LISTS) this.lists.delete(this.lists.keys().next().value!);
  }
}
