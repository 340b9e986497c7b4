// patches/fast-xml-parser+5.11.2.patch makes fast-xml-parser compile a parser's stop-node paths once, not again for
// every document (feedsmith's parsers have 425 of them: most of the time spent on a small feed). These tests fail when
// the patch no longer applies (a new version, a lost postinstall), unless fast-xml-parser caches them itself.

import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { XMLParser } from 'fast-xml-parser';

const PACKAGE = '/node_modules/fast-xml-parser/';

/** The installed package directory a resolved file of fast-xml-parser belongs to. */
function packageDirectory(file: string): string {
  const at = file.lastIndexOf(PACKAGE);
  assert.ok(at >= 0, file);
  return file.slice(0, at + PACKAGE.length);
}

describe('the fast-xml-parser patch', () => {
  it('is in the copy feedsmith loads', () => {
    const feedsmith = fileURLToPath(import.meta.resolve('feedsmith'));
    const theirs = createRequire(feedsmith).resolve('fast-xml-parser');
    const ours = fileURLToPath(import.meta.resolve('fast-xml-parser'));
    assert.equal(packageDirectory(theirs), packageDirectory(ours));
  });

  it('compiles a parser’s stop nodes once, for its first document only', () => {
    const parser = new XMLParser({ stopNodes: ['feed.content', 'rss.channel.item.description'] });
    // The parser's built options (a plain property): every read of a stop node from them is counted.
    const options = (parser as unknown as { options: { stopNodes: string[] } }).options;
    let reads = 0;
    options.stopNodes = new Proxy(options.stopNodes, {
      get(target, key, receiver) {
        if (typeof key === 'string' && /^\d+$/.test(key)) reads += 1;
        return Reflect.get(target, key, receiver);
      },
    });
    const contents = [0, 1, 2, 3, 4].map((n) => parser.parse(`<feed><content><b>${n}</b></content></feed>`).feed.content);
    assert.deepEqual(contents, ['<b>0</b>', '<b>1</b>', '<b>2</b>', '<b>3</b>', '<b>4</b>'], 'still stop nodes');
    assert.equal(reads, 2, `two stop nodes, read ${reads} times in five documents: the patch is not applied`);
  });
});
