import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { domainWordsLoaded, labelWords, preloadDomainWords } from '../../src/leads/research/domain-words.js';

// The word list domains are split with takes 150-250 ms of one thread to read at once; read on a request's first
// split it would hold the event loop that long. The server loads it before it takes requests, a slice at a time
// (test/leads/domain-words-app.test.ts: the app does so when it is ready). This file runs in a process of its own, so
// nothing read the list before these tests.

describe('the word list domains are split with', () => {
  it('loads in slices that let other callbacks run between them, and is the list read whole', async () => {
    assert.equal(domainWordsLoaded(), false, 'nothing has read the list yet');
    let turns = 0;
    const ticker = setInterval(() => turns++, 0);
    await preloadDomainWords();
    clearInterval(ticker);
    assert.equal(domainWordsLoaded(), true);
    // 126,000 words, 5,000 a slice.
    assert.ok(turns >= 20, `other callbacks ran ${turns} times while the list loaded`);
    assert.deepEqual(labelWords('acmewidgets'), ['acme', 'widgets']);
    assert.deepEqual(labelWords('skinbylovely'), ['skin', 'by', 'lovely']);
    assert.deepEqual(labelWords('unforgettablesmile'), ['unforgettable', 'smile']);
    assert.deepEqual(labelWords('medtronic'), ['medtronic']);
  });
});
