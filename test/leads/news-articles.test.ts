import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { extractCompany } from '../../src/leads/research/index.js';

// Real news articles (fixtures/news-articles, sources in its README), each read as if its site served it as the home
// page: what the company does must never come from an article (issue 14).

const DIR = new URL('./fixtures/news-articles/', import.meta.url);
const { pages } = JSON.parse(readFileSync(new URL('index.json', DIR), 'utf8')) as { pages: Array<{ file: string; url: string }> };
/** The share of articles that may still give a description (the misses are printed). */
const MAX_LEAK_RATE = 0.03;

describe('company research on real news articles', () => {
  it(`takes no description from at least ${(1 - MAX_LEAK_RATE) * 100}% of them, and no product text from those it knows`, () => {
    const leaks: string[] = [];
    for (const { file, url } of pages) {
      const domain = new URL(url).hostname.replace(/^www\./, '');
      const facts = extractCompany(readFileSync(new URL(file, DIR), 'utf8'), `https://${domain}/`, { domain });
      if (facts.article) assert.equal(facts.product_description, null, file);
      if (facts.description !== null) leaks.push(`  ${file} (${url}): ${JSON.stringify(facts.description.slice(0, 80))}`);
    }
    assert.ok(pages.length >= 200, `${pages.length} articles`);
    console.log(
      `${pages.length - leaks.length}/${pages.length} articles give no description${leaks.length > 0 ? `; these do:\n${leaks.join('\n')}` : ''}`,
    );
    assert.ok(leaks.length / pages.length <= MAX_LEAK_RATE, `${leaks.length} of ${pages.length} articles gave a description`);
  });
});
