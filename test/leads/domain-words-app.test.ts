import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { domainWordsLoaded } from '../../src/leads/research/domain-words.js';
import { startApp } from '../helpers/app.js';

// The server loads the word list domains are split with before it takes requests (test/leads/domain-words.test.ts
// says why). This file runs in a process of its own, so nothing read the list before.

describe('a server that takes leads', () => {
  it('has the word list loaded when it is ready', async () => {
    assert.equal(domainWordsLoaded(), false);
    const test = await startApp('sqlite');
    try {
      assert.equal(domainWordsLoaded(), true);
    } finally {
      await test.close();
    }
  });
});
