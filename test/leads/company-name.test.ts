import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { extractCompany } from '../../src/leads/research/index.js';
import { domainMatchScore } from '../../src/leads/research/name.js';
import { copyrightHolders, isBareDomainLabel, nameFromEvidence, NO_EVIDENCE } from '../../src/leads/research/company-name.js';

// The causes of wrong company names named in issue 14, each on a small page; test/leads/research-corpus.test.ts
// measures the same rules on real saved pages.

const page = (head: string, body = ''): string => `<!doctype html><html><head>${head}</head><body>${body}</body></html>`;
const extract = (html: string, domain: string) => extractCompany(html, `https://${domain}/`, { domain });

describe('company names from the page', () => {
  it('splits a one-word domain where the page writes the name as words', () => {
    const titled = page('<title>Acme Widgets | Industrial fasteners since 1952</title>');
    assert.equal(extract(titled, 'acmewidgets.com').name, 'Acme Widgets');
    // The title only repeats the domain: the logo and the copyright line spell it.
    const logo = page(
      '<title>acmewidgets</title>',
      '<header><a href="/"><img src="/logo.png" alt="Acme Widgets"></a></header><footer>© 2024 Acme Widgets</footer>',
    );
    assert.equal(extract(logo, 'acmewidgets.com').name, 'Acme Widgets');
    // No title at all: the domain written as words in the text.
    const text = page('', '<h1>Welcome</h1><p>Since 1952 Acme Widgets has made fasteners for builders.</p>');
    assert.equal(extract(text, 'acmewidgets.com').name, 'Acme Widgets');
  });

  it('never takes the page part of a title for the brand', () => {
    assert.equal(extract(page('<title>Video Player - Embed | Acme Widgets</title>'), 'acmewidgets.com').name, 'Acme Widgets');
    assert.equal(extract(page('<title>Home | Acme Widgets</title>'), 'acmewidgets.com').name, 'Acme Widgets');
    assert.equal(extract(page('<title>Welcome to Acme Widgets</title>'), 'acmewidgets.com').name, 'Acme Widgets');
  });

  it('prefers the full brand the page backs over the shortest form', () => {
    const html = page(
      '<title>Acme Widgets Corporation - Fasteners</title>',
      '<footer>Copyright © 2024 Acme Widgets Corporation. All rights reserved.</footer>',
    );
    assert.equal(extract(html, 'acme.com').name, 'Acme Widgets Corporation');
    // The body text uses the longer form as a name; a description that only repeats the title backs nothing.
    const written = page(
      '<title>Callows Audio</title><meta name="description" content="Callows Audio">',
      '<p>We have over thirty years experience in mobile disco. Thank you for your interest in Callows Audio!</p>',
    );
    assert.equal(extract(written, 'callows.com').name, 'Callows Audio');
    // Not backed anywhere else on the page: the words that spell the domain.
    assert.equal(extract(page('<title>Acme Widgets Shop - Fasteners</title>'), 'acmewidgets.com').name, 'Acme Widgets');
  });

  it('a host name of the domain is not a name; an address in a copyright line loses its suffix', () => {
    assert.equal(isBareDomainLabel('zebra.acme-e.com', 'acme-e.com'), true);
    assert.equal(isBareDomainLabel('www.acme.com', 'acme.com'), true);
    assert.equal(isBareDomainLabel('Booking.com', 'booking.com'), false);
    const footer = { ...NO_EVIDENCE, holders: copyrightHolders('Copyright © 1995-2014 BlueDogInk.com') };
    assert.deepEqual(footer.holders, ['BlueDogInk.com']);
    assert.equal(nameFromEvidence('bluedogink.com', footer), 'BlueDogInk');
  });

  it('a title of product names gives way to the owner the copyright line names; "--" splits a title', () => {
    const html = page(
      '<title>Car Loans | Car Finance | Novated Lease Australia</title>',
      '<h1>Car Loans Australia</h1><div>© Copyright 2003-2014 FinCar Pty Ltd. </div>',
    );
    assert.equal(extract(html, 'fincar.com.au').name, 'FinCar Pty Ltd');
    assert.equal(extract(page('<title>ToledoCars.com -- Price Quotes, Research</title>'), 'toledocars.com').name, 'ToledoCars.com');
  });

  it('reads a legal form written into the domain', () => {
    const html = page('<title>Contact Us</title><meta name="copyright" content="Copyright 2014 by Abacus Solutions, LLC.">');
    assert.equal(extract(html, 'abacusllc.com').name, 'Abacus Solutions, LLC');
    assert.equal(domainMatchScore('Cost Plus World Market', 'costco.com'), 0);
  });

  it('reads copyright holders without years, "All rights reserved" or the sentence after', () => {
    assert.deepEqual(copyrightHolders('© 2014 Tri-State. All rights reserved.'), ['Tri-State']);
    assert.deepEqual(copyrightHolders('© Copyright 2003-2014 FinCar Pty Ltd. '), ['FinCar Pty Ltd']);
    assert.deepEqual(copyrightHolders('Copyright © 2012 R.S. Pressman & Associates, Inc.'), ['R.S. Pressman & Associates, Inc']);
  });
});

describe('what the company does', () => {
  const description = '<meta name="description" content="Acme Widgets makes fasteners for builders.">';

  it('comes from the Organization, else the page description', () => {
    const org = `<script type="application/ld+json">{"@type":"Organization","name":"Acme Widgets","description":"Fasteners for builders since 1952."}</script>`;
    assert.equal(extract(page(org + description), 'acmewidgets.com').description, 'Fasteners for builders since 1952.');
    assert.equal(
      extract(page('<title>Acme Widgets</title>' + description), 'acmewidgets.com').description,
      'Acme Widgets makes fasteners for builders.',
    );
  });

  it('is never taken from a dated article', () => {
    const marks = [
      `<script type="application/ld+json">{"@type":"NewsArticle","headline":"Acme buys Beta","datePublished":"2024-05-01"}</script>`,
      `<script type="application/ld+json">{"@type":"BlogPosting","headline":"Ten tips"}</script>`,
      '<meta property="article:published_time" content="2024-05-01T10:00:00Z">',
      '<meta property="og:type" content="article"><meta property="og:url" content="https://acmewidgets.com/news/acme-buys-beta">',
    ];
    for (const mark of marks) {
      const facts = extract(page('<title>Acme buys Beta | Acme Widgets</title>' + description + mark), 'acmewidgets.com');
      assert.equal(facts.description, null, mark);
      assert.equal(facts.name, 'Acme Widgets', mark);
    }
  });

  it('says nothing rather than repeat the title, a template placeholder or empty template fields', () => {
    const title = '<title>Acme Widgets</title>';
    for (const content of ['Acme Widgets', '$metaDescriptionE', ' : Contact Us - ']) {
      const html = page(`${title}<meta name="description" content="${content}">`);
      assert.equal(extract(html, 'acmewidgets.com').description, null, content);
    }
  });
});
