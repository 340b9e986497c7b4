import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { createSafeFetcher } from '../../src/net/safe-fetch.js';
import type { SafeFetcher } from '../../src/net/safe-fetch.js';
import { researchCompany } from '../../src/leads/research/index.js';
import type { ResearchOutcome } from '../../src/leads/research/index.js';
import { generateBuiltinEmail } from '../../src/leads/generation/builtin.js';
import { extractCompany } from '../../src/leads/research/extract.js';
import type { LeadFacts } from '../../src/leads/generation/builtin.js';

// The corpus of real saved pages (fixtures/company-pages, sources in SOURCES.md), each served by a local server as
// the home page of its company's domain, read by the real research exactly as a real site would be.

interface CorpusPage {
  file: string;
  domain: string;
  kind: 'home' | 'inner' | 'article';
  /** Accepted spellings of the company name. */
  names: string[];
  /** How the description must start, or null when there must be none. */
  description: string | null;
  /** A batch of pages held out while the rules were written (SOURCES.md); its rate is reported on its own. */
  batch?: string;
}

const CORPUS = new URL('./fixtures/company-pages/', import.meta.url);
const { pages } = JSON.parse(readFileSync(new URL('expected.json', CORPUS), 'utf8')) as { pages: CorpusPage[] };
const UA = 'Masthead-test/0.1 (+https://example.invalid/bot)';
/** The share of company pages whose name must be right (issue 14: at least 95%). */
const NAME_RATE = 0.95;
/** The same pages' names with their site-name metadata removed: the fallbacks must still be right on 90%. */
const STRIPPED_NAME_RATE = 0.9;
const SITE_NAME_METADATA =
  /<meta\b[^>]*\b(?:og:site_name|application-name|og:title|twitter:title)\b[^>]*>|<script\b[^>]*ld\+json[^>]*>[\s\S]*?<\/script>/gi;

/** Names compared as words: case, accents and punctuation ignored, word breaks kept ("Skinbylovely" ≠ "Skin by Lovely"). */
function nameKey(name: string): string {
  return name
    .normalize('NFKD')
    .replace(/\p{M}+/gu, '')
    .toLowerCase()
    .replace(/[^\p{L}\p{N}&]+/gu, ' ')
    .trim();
}

function collapse(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

describe('company research on the corpus of real pages', () => {
  let server: http.Server;
  let template = '';
  let fetcher: SafeFetcher;
  const outcomes = new Map<string, ResearchOutcome>();

  before(async () => {
    const bodies = new Map(pages.map((page) => [`/${page.domain}/`, readFileSync(new URL(page.file, CORPUS))]));
    server = http.createServer((req, res) => {
      const body = bodies.get(req.url ?? '');
      if (!body) return res.writeHead(404, { 'Content-Type': 'text/html' }).end('<h1>Not found</h1>');
      // The fixtures are stored as UTF-8 whatever their meta tags say; the HTTP charset wins, as on a real server.
      res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' }).end(body);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    template = `http://127.0.0.1:${port}/{domain}/`;
    fetcher = createSafeFetcher({ allow: [`127.0.0.1:${port}`], userAgent: UA });
    for (const page of pages) {
      outcomes.set(page.file, await researchCompany(page.domain, { fetcher, siteUrlTemplate: template }));
    }
  });

  after(async () => {
    await fetcher.close();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it('reads every page as the site (no fallback to the domain)', () => {
    for (const page of pages) {
      const outcome = outcomes.get(page.file)!;
      assert.equal(outcome.fallbackReason, null, `${page.file}: ${outcome.fallbackReason}`);
      assert.equal(outcome.profile.source, 'site', page.file);
    }
  });

  it(`names the company right on at least ${NAME_RATE * 100}% of the company pages`, () => {
    const companyPages = pages.filter((page) => page.kind !== 'article');
    const misses: string[] = [];
    let homeRight = 0;
    for (const page of companyPages) {
      const name = outcomes.get(page.file)!.profile.name;
      const right = page.names.some((expected) => nameKey(expected) === nameKey(name));
      if (right && page.kind === 'home') homeRight++;
      if (!right)
        misses.push(`  ${page.file} (${page.kind}): got ${JSON.stringify(name)}, expected ${page.names.map((n) => JSON.stringify(n)).join(' or ')}`);
    }
    const homes = companyPages.filter((page) => page.kind === 'home').length;
    for (const batch of new Set(companyPages.flatMap((page) => (page.batch ? [page.batch] : [])))) {
      const inBatch = companyPages.filter((page) => page.batch === batch);
      const missed = inBatch.filter((page) => misses.some((miss) => miss.startsWith(`  ${page.file} `))).length;
      console.log(`${batch}: company name right on ${inBatch.length - missed}/${inBatch.length} pages`);
    }
    const rate = (companyPages.length - misses.length) / companyPages.length;
    console.log(
      `company name right on ${companyPages.length - misses.length}/${companyPages.length} company pages (${(rate * 100).toFixed(1)}%), ` +
        `${homeRight}/${homes} home pages${misses.length > 0 ? `; misses:\n${misses.join('\n')}` : ''}`,
    );
    assert.ok(rate >= NAME_RATE, `name rate ${(rate * 100).toFixed(1)}% is under ${NAME_RATE * 100}%`);
  });

  // The issue's first cause of wrong names: a page with no og:site_name. The home pages that name themselves in
  // metadata are read again without it (og:site_name, application-name, og:title, twitter:title, JSON-LD), so the
  // name must come from the title, the logo, the copyright line and the text, as on pages that never had it.
  it(`names the company right on at least ${STRIPPED_NAME_RATE * 100}% of those home pages read without their site-name metadata`, () => {
    let read = 0;
    const misses: string[] = [];
    for (const page of pages.filter((p) => p.kind === 'home')) {
      const html = readFileSync(new URL(page.file, CORPUS), 'utf8');
      const stripped = html.replace(SITE_NAME_METADATA, '');
      if (stripped === html) continue;
      read++;
      const { name } = extractCompany(stripped, `https://${page.domain}/`, { domain: page.domain });
      if (!page.names.some((expected) => nameKey(expected) === nameKey(name ?? ''))) misses.push(`  ${page.file}: got ${JSON.stringify(name)}`);
    }
    const rate = (read - misses.length) / read;
    console.log(`without site-name metadata: company name right on ${read - misses.length}/${read} home pages; misses:\n${misses.join('\n')}`);
    assert.ok(read >= 50, `only ${read} pages name themselves in metadata`);
    assert.ok(rate >= STRIPPED_NAME_RATE, `name rate without metadata ${(rate * 100).toFixed(1)}% is under ${STRIPPED_NAME_RATE * 100}%`);
  });

  it('takes what the company does only from text that describes it, never from an article', () => {
    const wrong: string[] = [];
    for (const page of pages) {
      const { description } = outcomes.get(page.file)!.profile;
      const right = page.description === null ? description === null : collapse(description ?? '').startsWith(page.description);
      if (!right)
        wrong.push(
          `  ${page.file}: got ${JSON.stringify(description)}, expected ${page.description === null ? 'none' : JSON.stringify(`${page.description}…`)}`,
        );
    }
    console.log(
      `description right on ${pages.length - wrong.length}/${pages.length} pages${wrong.length > 0 ? `; wrong:\n${wrong.join('\n')}` : ''}`,
    );
    for (const page of pages.filter((p) => p.kind === 'article')) {
      const { profile } = outcomes.get(page.file)!;
      assert.equal(profile.description, null, `${page.file}: an article is not what the company does`);
      assert.equal(profile.product_description, null, `${page.file}: an article's text is not the company's product`);
    }
    assert.deepEqual(wrong, []);
  });

  it('every built-in email names the person and the company, and says what it does only from the description', () => {
    for (const page of pages) {
      const { profile } = outcomes.get(page.file)!;
      const facts: LeadFacts = {
        firstName: 'Maria',
        lastName: 'Gonzalez',
        email: `maria@${page.domain}`,
        domain: page.domain,
        company: {
          name: profile.name,
          description: profile.description,
          product_description: profile.product_description,
          industry: profile.industry,
          source: profile.source,
        },
        sender: { name: 'Dana Smith', company: 'Beacon Analytics', offer: 'help B2B sales teams research accounts' },
      };
      const { subject, body } = generateBuiltinEmail(facts);
      assert.match(body, /^Hi Maria,/, page.file);
      assert.ok(`${subject}\n${body}`.includes(profile.name), `${page.file}: the company ${JSON.stringify(profile.name)} is named`);
      const opening = body.split('\n\n')[1] ?? '';
      assert.ok(opening.toLowerCase().includes(profile.name.toLowerCase()), `${page.file}: the opening names the company: ${opening}`);
      const saysWhatItDoes = /“|I saw that/.test(opening);
      if (profile.description === null) {
        assert.ok(!saysWhatItDoes && !/website/i.test(body), `${page.file}: nothing about what it does without a description: ${opening}`);
      } else if (saysWhatItDoes) {
        const clause = opening.replace(/^.*?(?:“|I saw that )/, '').replace(/[”.…。]+$/u, '');
        const firstWords = clause.split(/\s+/).slice(0, 3).join(' ');
        assert.ok(
          collapse(profile.description).toLowerCase().includes(firstWords.toLowerCase()),
          `${page.file}: the quote comes from the description: ${opening}`,
        );
      }
      if (page.kind === 'article') {
        const article = readFileSync(new URL(page.file, CORPUS), 'utf8');
        const headline = /<title>([^<]*)<\/title>/.exec(article)?.[1] ?? '';
        assert.ok(!body.includes(headline.slice(0, 30)), `${page.file}: the headline is not quoted`);
      }
    }
  });
});
