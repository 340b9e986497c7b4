import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import iconv from 'iconv-lite';
import { createSafeFetcher } from '../../src/net/safe-fetch.js';
import type { SafeFetcher } from '../../src/net/safe-fetch.js';
import {
  extractCompany,
  homePageCandidates,
  nameFromTitle,
  pooledPageExtractor,
  profileFromDomain,
  registrableDomain,
  researchCompany,
} from '../../src/leads/research/index.js';
import { WorkerPool } from '../../src/workers/pool.js';
import type { CompanyProfile, ResearchOutcome } from '../../src/leads/research/index.js';
import { classifySocialUrl } from '../../src/leads/research/social.js';

const UA = 'Masthead-test/0.1 (+https://example.invalid/bot)';
const fixture = (name: string): string => readFileSync(new URL(`./fixtures/${name}`, import.meta.url), 'utf8');

type Route = (req: http.IncomingMessage, res: http.ServerResponse) => void;

function html(body: string | Buffer, contentType = 'text/html; charset=utf-8', extra: Record<string, string> = {}): Route {
  return (_req, res) => {
    res.writeHead(200, { 'Content-Type': contentType, ...extra });
    res.end(body);
  };
}

const status =
  (code: number, headers: Record<string, string> = {}): Route =>
  (_req, res) => {
    res.writeHead(code, headers);
    res.end(code >= 400 ? 'error page' : '');
  };

/** Every string in a profile, to check that no markup ever reaches one. */
function allStrings(profile: CompanyProfile): string[] {
  return [
    profile.name,
    profile.description,
    profile.product_description,
    profile.logo,
    profile.language,
    ...profile.industry,
    ...Object.values(profile.links),
  ].filter((v): v is string => typeof v === 'string');
}

function assertNoMarkup(profile: CompanyProfile): void {
  for (const text of allStrings(profile)) {
    assert.doesNotMatch(text, /<\/?[a-z!][^>]*>/i, `markup in ${JSON.stringify(text)}`);
    assert.doesNotMatch(text, /&(?:lt|gt|amp|quot|#\d+);/, `an undecoded entity in ${JSON.stringify(text)}`);
  }
}

describe('company research against local sites', () => {
  let server: http.Server;
  let port = 0;
  let template = '';
  let fetcher: SafeFetcher;
  const requests: string[] = [];
  // One server plays every company: /{domain}/... is that company's site.
  const routes = new Map<string, Route>();

  before(async () => {
    server = http.createServer((req, res) => {
      requests.push(req.url ?? '');
      const route = routes.get(req.url ?? '');
      if (route) return route(req, res);
      res.writeHead(404, { 'Content-Type': 'text/html' }).end('<h1>Not found</h1>');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
    template = `http://127.0.0.1:${port}/{domain}/`;
    fetcher = createSafeFetcher({ allow: [`127.0.0.1:${port}`], userAgent: UA });

    routes.set('/acme-widgets.com/', html(fixture('acme-widgets.html')));
    routes.set('/acme-widgets.com/about-us/', html(fixture('acme-widgets-about.html')));
    routes.set('/northwind.io/', html(fixture('northwind-og.html'), 'text/html; charset=utf-8', { 'Content-Language': 'en-GB' }));
    routes.set('/northwind.io/solutions.html', status(500));
    routes.set('/bare-bones.net/', (_req, res) => {
      // No Content-Type at all: the body is sniffed.
      res.writeHead(200);
      res.end(fixture('bare-title.html'));
    });
    routes.set('/gadgets.com/', html(fixture('tagline-only.html')));
    routes.set('/mueller-maschinenbau.de/', html(fixture('mueller-de.html')));
    // Stored as UTF-8 for review; served in the charset their meta tags declare.
    routes.set('/sakura-seiki.co.jp/', html(iconv.encode(fixture('sakura-seiki.sjis.html'), 'shift_jis'), 'text/html'));
    routes.set('/uralzavod.ru/', html(iconv.encode(fixture('zavod-ru.cp1251.html'), 'windows-1251'), 'text/html', { 'Content-Language': 'ru' }));
    // Only the prescan finds the charset: a commented-out tag comes first, and the real one names a label iconv lacks.
    routes.set(
      '/uralzavod-legacy.ru/',
      html(
        iconv.encode(
          fixture('zavod-ru.cp1251.html').replace(
            '<meta charset="windows-1251">',
            '<!-- <meta charset="utf-8"> --><meta http-equiv="Content-Type" content="text/html; charset=x-cp1251">',
          ),
          'windows-1251',
        ),
        'text/html',
      ),
    );
    // The HTTP charset wins over a contradicting meta tag.
    routes.set('/sakura-euc.co.jp/', html(iconv.encode(fixture('sakura-seiki.sjis.html'), 'euc-jp'), 'text/html; charset=EUC-JP'));
    routes.set('/huge.com/', (_req, res) => {
      res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' });
      const filler = `<p>${'widgets and gadgets '.repeat(50)}</p>\n`;
      res.write('<!doctype html><html><head><title>Huge Corp</title></head><body>');
      for (let written = 0; written < 3 * 1024 * 1024; written += filler.length) res.write(filler);
      res.end('</body></html>');
    });
    routes.set('/slow.com/', (_req, res) => {
      const timer = setTimeout(() => html('<title>Slow Inc</title>')(_req, res), 3000);
      res.on('close', () => clearTimeout(timer));
    });
    routes.set('/www.slow.com/', routes.get('/slow.com/')!);
    routes.set('/private-redirect.com/', status(302, { Location: 'http://10.0.0.1/' }));
    routes.set('/loopback-redirect.com/', status(302, { Location: `http://127.0.0.2:${port}/loopback-redirect.com/` }));
    routes.set('/api-only.com/', html('{"ok":true}', 'application/json'));
    routes.set('/www.api-only.com/', html('{"ok":true}', 'application/json'));
    routes.set('/text-only.com/', html('<html><title>Plain</title></html>', 'text/plain'));
    routes.set('/www-only.com/', status(404));
    routes.set('/www.www-only.com/', html('<html><head><title>WWW Only Ltd | Welcome</title></head><body></body></html>'));
    routes.set('/moved.com/', status(301, { Location: `/moved.com/new-home/` }));
    routes.set(
      '/moved.com/new-home/',
      html('<html lang="fr"><head><title>Moved SA</title><link rel="icon" href="favicon.png"></head><body></body></html>'),
    );
    routes.set(
      '/markup.com/',
      html(`<html><head>
        <title>Markup &amp; Co &lt;b&gt;Bold&lt;/b&gt; | Markup</title>
        <meta name="description" content="&lt;script&gt;alert(1)&lt;/script&gt;We make   &amp;lt;em&amp;gt;tags&amp;lt;/em&amp;gt; safe. ${'Very long description. '.repeat(80)}">
        <script type="application/ld+json">{"@type":"Organization","name":"<b>Markup</b> &amp; Co","logo":"javascript:alert(1)"}</script>
        <link rel="icon" href="data:image/png;base64,AAAA">
        <link rel="icon" sizes="32x32" href="/markup.com/icon-32.png">
        </head><body><h1>${'Headline '.repeat(40)}</h1>${`<p>${'A lead paragraph with enough words to count. '.repeat(6)}</p>`.repeat(10)}</body></html>`),
    );
    routes.set('/empty.com/', html(''));
    // Hostile home pages: 500 KB of linked images (a quarter of a second to read on the event loop), and markup
    // nested deeper than the reader's recursion goes.
    routes.set(
      '/many-logos.com/',
      html(
        '<html><head><title>Many Logos Ltd | Home</title><meta name="description" content="Many Logos Ltd makes logos."></head><body>' +
          '<a href="/"><img src="/logo.png" alt="Many Logos Ltd"></a>'.repeat(9000) +
          '<footer>© 2024 Many Logos Ltd</footer></body></html>',
      ),
    );
    routes.set(
      '/deep.com/',
      html(`<html><head><title>Deep Corp</title></head><body>${'<div>'.repeat(30000)}Deep${'</div>'.repeat(30000)}</body></html>`),
    );
  });

  after(async () => {
    await fetcher.close();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  const research = (domain: string, extra: { timeoutMs?: number; maxBytes?: number } = {}): Promise<ResearchOutcome> =>
    researchCompany(domain, { fetcher, siteUrlTemplate: template, ...extra });
  const url = (path: string) => `http://127.0.0.1:${port}${path}`;

  it('reads a large hostile page in a worker thread, with the same facts as on the event loop', async () => {
    const pool = new WorkerPool({ threads: 1 });
    try {
      const extractPage = pooledPageExtractor(pool);
      const pooled = await researchCompany('many-logos.com', { fetcher, siteUrlTemplate: template, extractPage });
      const inline = await research('many-logos.com');
      assert.equal(pooled.fallbackReason, null);
      assert.equal(pooled.profile.name, 'Many Logos Ltd');
      assert.equal(pooled.profile.description, 'Many Logos Ltd makes logos.');
      assert.deepEqual(pooled.profile, inline.profile);
      // Markup nested deeper than any browser builds (30,000 levels) is refused in the worker: the domain's profile,
      // with the reason.
      const deep = await researchCompany('deep.com', { fetcher, siteUrlTemplate: template, extractPage });
      assert.equal(deep.profile.source, 'domain');
      assert.match(deep.fallbackReason ?? '', /could not be read/);
      // The pool still works after that failure.
      assert.equal((await researchCompany('many-logos.com', { fetcher, siteUrlTemplate: template, extractPage })).profile.name, 'Many Logos Ltd');
    } finally {
      await pool.close();
    }
  });

  it('reads a JSON-LD @graph home page and follows its /about page once', async () => {
    requests.length = 0;
    const { profile, fallbackReason, fetchedUrls } = await research('acme-widgets.com');
    assert.equal(fallbackReason, null);
    assert.deepEqual(fetchedUrls, [url('/acme-widgets.com/'), url('/acme-widgets.com/about-us/')]);
    assert.deepEqual(requests, ['/acme-widgets.com/', '/acme-widgets.com/about-us/'], 'one extra page, not /products too');
    assert.equal(profile.source, 'site');
    assert.equal(profile.name, 'Acme Widgets Inc.');
    assert.equal(profile.description, 'Acme Widgets designs and manufactures precision widgets for industrial automation & robotics.');
    assert.deepEqual(profile.industry, ['Industrial automation', 'Robotics', 'Precision engineering']);
    assert.equal(profile.logo, 'https://cdn.acme-widgets.com/logo-512.png');
    assert.equal(profile.language, 'en');
    assert.deepEqual(profile.links, {
      website: url('/acme-widgets.com/'),
      linkedin: 'https://www.linkedin.com/company/acme-widgets',
      twitter: 'https://twitter.com/acmewidgets',
      youtube: 'https://www.youtube.com/@acmewidgets',
      facebook: 'https://www.facebook.com/AcmeWidgets',
      instagram: 'https://www.instagram.com/acmewidgets',
      github: 'https://github.com/acme-widgets',
    });
    const product = profile.product_description ?? '';
    assert.ok(product.startsWith('Precision widgets for industrial automation. Acme Widgets builds servo-driven widgets'), product);
    assert.match(product, /Built for robotics integrators\. Our modular widget platform/);
    assert.match(product, /Family-owned since 1952\. Founded in Springfield/, 'the about page adds its lead text');
    for (const unwanted of [/cookie/i, /Navigation text/, /All rights reserved/, /Short line/, /case studies/, /Tweet this/, /About us\./]) {
      assert.doesNotMatch(product, unwanted);
    }
    assertNoMarkup(profile);
  });

  it('reads an OpenGraph-only page; a failing related page is only a warning', async () => {
    const outcome = await research('northwind.io');
    const { profile } = outcome;
    assert.equal(outcome.fallbackReason, null);
    assert.equal(profile.name, 'Northwind');
    assert.equal(profile.description, 'Northwind turns shipment events from carriers, warehouses and ERPs into one clean, real-time data feed.');
    assert.equal(profile.logo, url('/northwind.io/images/northwind-card.png'));
    assert.equal(profile.links.twitter, 'https://x.com/northwind_io');
    assert.equal(profile.language, 'en', 'from the Content-Language header');
    assert.deepEqual(outcome.fetchedUrls, [url('/northwind.io/'), url('/northwind.io/solutions.html')]);
    assert.equal(outcome.warnings?.length, 1);
    assert.match(outcome.warnings![0]!, /solutions\.html: http_status \(the server answered HTTP 500\)/);
    assert.equal(
      profile.product_description,
      'One feed for every shipment. Connect carriers, warehouses and your ERP in an afternoon; Northwind normalises every event into a single schema your analysts already understand.',
      'no navigation, dialog, aside, script, hidden or footer text',
    );
    assert.ok(profile.industry.length > 0 && profile.industry.length <= 5);
    assert.ok(profile.industry.includes('shipment'), profile.industry.join(', '));
    assert.ok(!profile.industry.includes('northwind'), 'the company name is not a keyword');
  });

  it('reads a bare page with only a title, sniffing HTML without a Content-Type', async () => {
    const { profile, fallbackReason } = await research('bare-bones.net');
    assert.equal(fallbackReason, null);
    assert.equal(profile.name, 'Bare Bones Consulting', 'the tagline is cut off the title');
    assert.equal(profile.description, null);
    assert.equal(profile.logo, null);
    assert.equal(profile.language, null);
    assert.match(profile.product_description ?? '', /^Strategy that sticks\. We help mid-sized manufacturers/);
    assert.ok(profile.industry.includes('strategy'), profile.industry.join(', '));
    for (const word of profile.industry) assert.ok(!['that', 'then', 'with', 'bare', 'bones'].includes(word), word);
  });

  it('falls back to the domain name when the title is only a tagline', async () => {
    const { profile } = await research('gadgets.com');
    assert.equal(profile.source, 'site');
    assert.equal(profile.name, 'Gadgets');
  });

  it('reads German pages: declared keywords, lang, umlauts matched to the spelled-out domain', async () => {
    const { profile, fetchedUrls, warnings } = await research('mueller-maschinenbau.de');
    assert.equal(profile.name, 'Müller Maschinenbau GmbH');
    assert.equal(profile.language, 'de');
    assert.deepEqual(profile.industry, ['Sondermaschinenbau', 'Montageanlagen', 'Prüfstände', 'Automatisierung']);
    assert.doesNotMatch(profile.product_description ?? '', /Tracking|Nutzererlebnis/, 'the Usercentrics banner is left out');
    assert.match(profile.product_description ?? '', /^Sondermaschinen, die passen\. Seit 1978/);
    assert.equal(fetchedUrls[1], url('/mueller-maschinenbau.de/unternehmen/'), 'the "Unternehmen" page is the about page');
    assert.match(warnings?.[0] ?? '', /HTTP 404/);
  });

  it('decodes Shift_JIS declared by a meta http-equiv tag', async () => {
    const { profile } = await research('sakura-seiki.co.jp');
    assert.equal(profile.name, '株式会社サクラ精機');
    assert.equal(profile.language, 'ja');
    assert.match(profile.description ?? '', /^株式会社サクラ精機は、精密部品の切削加工と組立を行う製造会社です。/);
    assert.match(profile.product_description ?? '', /^高精度な切削加工。 私たちは創業以来/);
    assert.ok(profile.industry.includes('精密') && profile.industry.includes('部品'), profile.industry.join(', '));
    assert.ok(!profile.industry.includes('株式会社') && !profile.industry.includes('サクラ'), profile.industry.join(', '));
  });

  it('prefers the HTTP charset over a contradicting meta tag', async () => {
    const { profile } = await research('sakura-euc.co.jp');
    assert.equal(profile.name, '株式会社サクラ精機');
  });

  it('decodes windows-1251 declared by meta charset; language from Content-Language', async () => {
    const { profile } = await research('uralzavod.ru');
    assert.equal(profile.name, 'ООО «Уральский Завод»', '« » are quotes, not title separators');
    assert.equal(profile.language, 'ru');
    assert.match(profile.description ?? '', /^Уральский Завод производит металлоконструкции/);
    assert.ok(profile.industry.includes('металлоконструкции'), profile.industry.join(', '));
  });

  it('decodes a charset only the HTML prescan finds (a commented-out tag first, a label such as x-cp1251)', async () => {
    const { profile } = await research('uralzavod-legacy.ru');
    assert.equal(profile.name, 'ООО «Уральский Завод»');
    assert.match(profile.description ?? '', /^Уральский Завод производит металлоконструкции/);
  });

  it('falls back to the domain when the page is over the size cap, without trying other addresses', async () => {
    const outcome = await research('huge.com');
    assert.equal(outcome.profile.source, 'domain');
    assert.deepEqual(outcome.profile, profileFromDomain('huge.com'));
    assert.match(outcome.fallbackReason ?? '', /^http:\/\/127\.0\.0\.1:\d+\/huge\.com\/: too_large/);
    assert.deepEqual(outcome.fetchedUrls, [url('/huge.com/')]);
  });

  it('the size cap is configurable', async () => {
    const outcome = await research('acme-widgets.com', { maxBytes: 1000 });
    assert.equal(outcome.profile.source, 'domain');
    assert.match(outcome.fallbackReason ?? '', /too_large/);
  });

  it('falls back to the domain when the site is slower than the budget', async () => {
    requests.length = 0;
    const outcome = await research('slow.com', { timeoutMs: 300 });
    assert.equal(outcome.profile.source, 'domain');
    assert.equal(outcome.profile.name, 'Slow');
    assert.match(outcome.fallbackReason ?? '', /slow\.com\/: timeout/);
    // The budget holds for the whole research: the first address used it up, so www.slow.com was not tried.
    assert.deepEqual(outcome.fetchedUrls, [url('/slow.com/')]);
    assert.deepEqual(requests, ['/slow.com/']);
  });

  it('refuses a redirect to a private address and falls back to the domain', async () => {
    for (const domain of ['private-redirect.com', 'loopback-redirect.com']) {
      requests.length = 0;
      const outcome = await research(domain);
      assert.equal(outcome.profile.source, 'domain', domain);
      assert.equal(outcome.fallbackReason?.includes('blocked_address'), true, outcome.fallbackReason ?? '');
      assert.deepEqual(outcome.fetchedUrls, [url(`/${domain}/`)], 'a blocked address is not retried elsewhere');
      assert.deepEqual(requests, [`/${domain}/`], 'nothing reached the private target');
    }
  });

  it('falls back when the site serves no HTML, after trying the www. variant', async () => {
    const outcome = await research('api-only.com');
    assert.equal(outcome.profile.source, 'domain');
    assert.deepEqual(outcome.fetchedUrls, [url('/api-only.com/'), url('/www.api-only.com/')]);
    assert.match(outcome.fallbackReason ?? '', /api-only\.com\/: not_html \(not an HTML page \(application\/json\)\); .*www\.api-only\.com/);
    const plain = await research('text-only.com');
    assert.match(plain.fallbackReason ?? '', /not_html \(not an HTML page \(text\/plain\)\)/);
    const empty = await research('empty.com');
    assert.match(empty.fallbackReason ?? '', /empty \(the page is empty\)/);
  });

  it('uses the www. variant when the bare domain fails', async () => {
    const { profile, fallbackReason, fetchedUrls } = await research('www-only.com');
    assert.equal(fallbackReason, null);
    assert.equal(profile.source, 'site');
    assert.equal(profile.name, 'WWW Only Ltd');
    assert.equal(profile.links.website, url('/www.www-only.com/'));
    assert.deepEqual(fetchedUrls, [url('/www-only.com/'), url('/www.www-only.com/')]);
  });

  it('follows redirects on the site and resolves relative URLs against the final page', async () => {
    const { profile } = await research('moved.com');
    assert.equal(profile.links.website, url('/moved.com/new-home/'));
    assert.equal(profile.logo, url('/moved.com/new-home/favicon.png'));
    assert.equal(profile.name, 'Moved SA');
    assert.equal(profile.language, 'fr');
  });

  it('never lets markup, unsafe URLs or unbounded text into the profile', async () => {
    const { profile } = await research('markup.com');
    assertNoMarkup(profile);
    assert.equal(profile.name, 'Markup & Co');
    assert.ok(profile.description!.startsWith('We make tags safe. Very long description.'), profile.description!);
    assert.ok(profile.description!.length <= 1000);
    assert.ok(profile.description!.endsWith('…'));
    assert.ok(profile.product_description!.length <= 2000);
    assert.equal(profile.logo, url('/markup.com/icon-32.png'), 'javascript: and data: URLs are skipped');
  });

  it('returns the domain profile for an unreachable port, with the reason', async () => {
    const closed = createSafeFetcher({ allow: ['127.0.0.1:1'], userAgent: UA });
    try {
      const outcome = await researchCompany('down.com', { fetcher: closed, siteUrlTemplate: 'http://127.0.0.1:1/{domain}/' });
      assert.equal(outcome.profile.source, 'domain');
      assert.equal(outcome.profile.name, 'Down');
      assert.match(outcome.fallbackReason ?? '', /down\.com\/: network \(the connection was refused\)/);
      assert.equal(outcome.fetchedUrls.length, 2);
    } finally {
      await closed.close();
    }
  });

  it('does not fetch anything for a value that is not a domain name', async () => {
    requests.length = 0;
    for (const bad of ['acme.com/../admin', '127.0.0.1', 'localhost', 'a b.com', '']) {
      const outcome = await research(bad);
      assert.equal(outcome.profile.source, 'domain');
      assert.deepEqual(outcome.fetchedUrls, []);
      assert.match(outcome.fallbackReason ?? '', /is not a domain name/);
    }
    assert.deepEqual(requests, []);
  });
});

describe('company research with the default https template', () => {
  it('tries https, then http, then www. and reports each failure (no real DNS: the resolver is played)', async () => {
    const asked: string[] = [];
    const fetcher = createSafeFetcher({
      allow: [],
      userAgent: UA,
      resolveHost: async (host) => {
        asked.push(host);
        throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
      },
    });
    try {
      const outcome = await researchCompany('nowhere-company.com', { fetcher, siteUrlTemplate: 'https://{domain}/' });
      assert.deepEqual(outcome.fetchedUrls, ['https://nowhere-company.com/', 'http://nowhere-company.com/', 'https://www.nowhere-company.com/']);
      assert.equal(outcome.profile.name, 'Nowhere Company');
      assert.equal(outcome.fallbackReason?.split('; ').length, 3);
      assert.match(outcome.fallbackReason ?? '', /^https:\/\/nowhere-company\.com\/: network \(the host name could not be resolved\)/);
      assert.ok(asked.includes('www.nowhere-company.com'));
    } finally {
      await fetcher.close();
    }
  });

  it('stops at a name that resolves to a private address', async () => {
    const fetcher = createSafeFetcher({
      allow: [],
      userAgent: UA,
      resolveHost: async () => [{ address: '10.1.2.3', family: 4 }],
    });
    try {
      const outcome = await researchCompany('intranet-co.com', { fetcher, siteUrlTemplate: 'https://{domain}/' });
      assert.deepEqual(outcome.fetchedUrls, ['https://intranet-co.com/']);
      assert.match(outcome.fallbackReason ?? '', /blocked_address/);
      assert.doesNotMatch(outcome.fallbackReason ?? '', /10\.1\.2\.3/, 'the resolved address is not disclosed');
    } finally {
      await fetcher.close();
    }
  });
});

describe('home page candidates', () => {
  it('default template: https, http, then https://www.', () => {
    assert.deepEqual(homePageCandidates('acme.com', 'https://{domain}/'), ['https://acme.com/', 'http://acme.com/', 'https://www.acme.com/']);
    assert.deepEqual(homePageCandidates('www.acme.com', 'https://{domain}/'), ['https://www.acme.com/', 'http://www.acme.com/']);
  });

  it('any other template is used as it is, then with www.', () => {
    assert.deepEqual(homePageCandidates('acme.com', 'http://127.0.0.1:8080/{domain}/'), [
      'http://127.0.0.1:8080/acme.com/',
      'http://127.0.0.1:8080/www.acme.com/',
    ]);
    assert.deepEqual(homePageCandidates('acme.com', 'https://proxy.example/site?d={domain}'), [
      'https://proxy.example/site?d=acme.com',
      'https://proxy.example/site?d=www.acme.com',
    ]);
  });
});

describe('names from domains and titles', () => {
  it('profileFromDomain', () => {
    const cases: Array<[string, string]> = [
      ['acme-corp.com', 'Acme Corp'],
      ['www.acme-corp.com', 'Acme Corp'],
      ['acme.co.uk', 'Acme'],
      ['mail.acme.co.uk', 'Acme'],
      ['shop.example-store.com.au', 'Example Store'],
      ['sakura-seiki.co.jp', 'Sakura Seiki'],
      ['my_company.de', 'My Company'],
      ['xn--bcher-kva.de', 'Bücher'],
      ['3m.com', '3m'],
      ['acme.io', 'Acme'],
      ['acme.gv.at', 'Acme'],
      ['www.acme.gv.at', 'Acme'],
      // A private suffix of the Public Suffix List: each site under github.io is its owner's, not GitHub's.
      ['foo.github.io', 'Foo'],
      // A label written as one word is split where it is plainly a compound of common words (issue 14: never
      // "Acmewidgets"); a made-up brand, an abbreviation or a label with digits stays whole.
      ['acmewidgets.com', 'Acme Widgets'],
      ['focusfurnishing.com', 'Focus Furnishing'],
      ['skinbylovely.com', 'Skin by Lovely'],
      ['slidingdoorco.com', 'Sliding Door Co'],
      ['unforgettablesmile.com', 'Unforgettable Smile'],
      ['bondnewyork.com', 'Bond New York'],
      ['gorilla-junkremoval.com', 'Gorilla Junk Removal'],
      ['medtronic.com', 'Medtronic'],
      ['atlassian.com', 'Atlassian'],
      ['etsy.com', 'Etsy'],
      ['kmblegal.com', 'Kmblegal'],
      ['tag44.com', 'Tag44'],
      ['stryker.com', 'Stryker'],
      ['spinkat.ru', 'Spinkat'],
    ];
    for (const [domain, name] of cases) assert.equal(profileFromDomain(domain).name, name, domain);
    assert.deepEqual(profileFromDomain('acme-corp.com'), {
      name: 'Acme Corp',
      description: null,
      product_description: null,
      industry: [],
      logo: null,
      links: { website: null },
      language: null,
      source: 'domain',
    });
  });

  it('registrableDomain keeps two-label domains and strips subdomains', () => {
    assert.equal(registrableDomain('acme.com'), 'acme.com');
    assert.equal(registrableDomain('a.b.acme.com'), 'acme.com');
    assert.equal(registrableDomain('mail.acme.co.uk'), 'acme.co.uk');
    assert.equal(registrableDomain('info.de'), 'info.de');
    assert.equal(registrableDomain('co.acme.de'), 'acme.de');
    assert.equal(registrableDomain('mail.acme.gv.at'), 'acme.gv.at');
    assert.equal(registrableDomain('www.foo.github.io'), 'foo.github.io');
    assert.equal(registrableDomain('co.uk'), 'co.uk', 'a suffix alone stays as it is');
  });

  it('nameFromTitle picks the part that names the company', () => {
    const cases: Array<[string, string, string | null]> = [
      ['Acme — The best widgets', 'acme.com', 'Acme'],
      ['Home | Acme', 'acme.com', 'Acme'],
      ['Acme: Widgets for every workshop', 'acme.com', 'Acme'],
      ['Widgets for every workshop - Acme Corp', 'acme-corp.com', 'Acme Corp'],
      ['Welcome to Acme Corp', 'acme.com', 'Acme Corp'],
      ['Startseite – Müller GmbH', 'mueller.de', 'Müller GmbH'],
      ['International Business Machines | Think', 'ibm.com', 'International Business Machines'],
      ['Best widgets in the whole town | Acme', 'other.com', 'Acme'],
      ['Acme-Corp', 'acme-corp.com', 'Acme-Corp'],
      // An empty page name before the separator ("%page% ~ %site%").
      [' ~ Nong Thon Restaurant', 'nongthonrestaurant.com', 'Nong Thon Restaurant'],
      ['The best widgets for your workshop and garden', 'acme.com', null],
      ['Home', 'acme.com', null],
      ['About us', 'acme.com', null],
      ['Über uns – Beispiel AG', 'muster.de', 'Beispiel AG'],
      ['', 'acme.com', null],
    ];
    for (const [title, domain, expected] of cases) assert.equal(nameFromTitle(title, domain), expected, title);
  });
});

describe('extractCompany', () => {
  const page = 'https://www.acme.com/';

  it('reads markup nested as deep as a browser builds it, and refuses deeper (every selector would cost its depth)', () => {
    const nested = (levels: number) => `<title>Acme Ltd</title><body>${'<div>'.repeat(levels)}Acme${'</div>'.repeat(levels)}</body>`;
    assert.equal(extractCompany(nested(500), page).name, 'Acme Ltd');
    assert.throws(() => extractCompany(nested(600), page), /nests its elements more than 512 deep/);
  });

  it('finds an Organization in a top-level array, nested as a publisher, or typed by URL', () => {
    const array = `<script type="application/ld+json">[{"@type":"WebPage","name":"Home"},{"@type":["Thing","Corporation"],"name":"Acme Holdings","logo":["/logo.svg"]}]</script>`;
    assert.equal(extractCompany(array, page).name, 'Acme Holdings');
    assert.equal(extractCompany(array, page).logo, 'https://www.acme.com/logo.svg');
    const nested = `<script type="application/ld+json">{"@context":"https://schema.org","@type":"WebSite","name":"Acme site","publisher":{"@type":"http://schema.org/LocalBusiness","name":"Acme Bakery","description":"Bread &amp; cakes"}}</script>`;
    const facts = extractCompany(nested, page);
    assert.equal(facts.name, 'Acme Bakery');
    assert.equal(facts.nameSource, 'json-ld');
    assert.equal(facts.description, 'Bread & cakes');
  });

  it('prefers the organization of the domain over an author employer or a partner', () => {
    const doc = `<script type="application/ld+json">{"@graph":[
      {"@type":"Article","author":{"@type":"Person","worksFor":{"@type":"Organization","name":"Other Media"}}},
      {"@type":"Organization","name":"Partner Ltd","url":"https://partner.example/"},
      {"@type":"Organization","name":"Acme","url":"https://acme.com/"}]}</script>`;
    assert.equal(extractCompany(doc, page, { domain: 'acme.com' }).name, 'Acme');
  });

  it('survives broken JSON-LD (raw newlines are forgiven, garbage is skipped)', () => {
    const newline = `<script type="application/ld+json">{"@type":"Organization","name":"Acme\nIndustries",}</script>`;
    assert.equal(extractCompany(newline, page).name, 'Acme Industries');
    const garbage = `<script type="application/ld+json">{not json</script><meta property="og:site_name" content="Acme OG">`;
    assert.equal(extractCompany(garbage, page).name, 'Acme OG');
  });

  it('application-name and website JSON-LD name come before the title', () => {
    assert.equal(extractCompany('<meta name="application-name" content="AcmeApp"><title>Something else</title>', page).name, 'AcmeApp');
    const website = '<script type="application/ld+json">{"@type":"WebSite","name":"Acme Web"}</script><title>x | y</title>';
    assert.equal(extractCompany(website, page).nameSource, 'json-ld-website');
  });

  it('industry keywords: declared ones decoded and bounded, at most ten', () => {
    const many = Array.from({ length: 15 }, (_, i) => `kw${i}`).join(', ');
    const facts = extractCompany(`<meta name="keywords" content="R&amp;amp;D, ${many}, ${'x'.repeat(80)}">`, page);
    assert.equal(facts.industry.length, 10);
    assert.equal(facts.industry[0], 'R&D');
    const ld = `<script type="application/ld+json">{"@type":"Organization","name":"Acme","industry":"Logistics","knowsAbout":[{"@type":"Thing","name":"Freight"},"Customs"]}</script>`;
    assert.deepEqual(extractCompany(ld, page).industry, ['Logistics', 'Freight', 'Customs']);
  });

  it('ignores an SVG title and leaves the name out when nothing names the company', () => {
    const facts = extractCompany('<body><svg><title>icon</title></svg></body>', page);
    assert.equal(facts.name, undefined);
  });

  it('logos: JSON-LD, then og:image, then a logo image, then the largest touch icon, then icons', () => {
    const icons = `<link rel="icon" href="/favicon-16.png" sizes="16x16"><link rel="icon" href="/favicon-64.png" sizes="64x64">`;
    assert.equal(extractCompany(icons, page).logo, 'https://www.acme.com/favicon-64.png');
    const touch = `${icons}<link rel="apple-touch-icon" href="/touch-120.png" sizes="120x120"><link rel="apple-touch-icon-precomposed" href="/touch-180.png" sizes="180x180">`;
    assert.equal(extractCompany(touch, page).logo, 'https://www.acme.com/touch-180.png');
    const img = `${touch}<header><img class="site-logo" src="/brand/logo.png"></header>`;
    assert.equal(extractCompany(img, page).logo, 'https://www.acme.com/brand/logo.png');
    const og = `${img}<meta property="og:image" content="//cdn.acme.com/card.jpg">`;
    assert.equal(extractCompany(og, page).logo, 'https://cdn.acme.com/card.jpg');
    const base = `<base href="https://static.acme.com/assets/"><link rel="icon" href="fav.ico">`;
    assert.equal(extractCompany(base, page).logo, 'https://static.acme.com/assets/fav.ico');
    assert.equal(extractCompany('<meta property="og:image" content="ftp://acme.com/x.png">', page).logo, null);
  });

  it('language from lang, then Content-Language, then og:locale', () => {
    assert.equal(extractCompany('<html lang="pt-BR"></html>', page).language, 'pt');
    assert.equal(extractCompany('<html></html>', page, { contentLanguage: 'nl-BE, en' }).language, 'nl');
    assert.equal(extractCompany('<meta property="og:locale" content="it_IT">', page).language, 'it');
    assert.equal(extractCompany('<html lang="??"></html>', page).language, null);
  });

  it('related pages: same site only, about before products, never the page itself', () => {
    const doc = `<a href="https://other.com/about">x</a><a href="/products/">Products</a><a href="/">Home</a>
      <a href="https://acme.com/company/about-us.html">Who</a><a href="/en/team">Über uns</a><a href="mailto:a@acme.com">About</a>`;
    assert.deepEqual(extractCompany(doc, page).relatedPages, [
      'https://acme.com/company/about-us.html',
      'https://www.acme.com/en/team',
      'https://www.acme.com/products/',
    ]);
  });
});

describe('social links', () => {
  it('accepts company pages and canonicalizes them', () => {
    const cases: Array<[string, string | null]> = [
      ['https://de.linkedin.com/company/acme-gmbh/?trk=x', 'https://www.linkedin.com/company/acme-gmbh'],
      ['http://www.linkedin.com/school/acme-academy', 'https://www.linkedin.com/school/acme-academy'],
      ['https://mobile.twitter.com/acme', 'https://twitter.com/acme'],
      ['https://x.com/acme_inc', 'https://x.com/acme_inc'],
      ['https://m.facebook.com/acme.official/', 'https://www.facebook.com/acme.official'],
      ['https://www.facebook.com/profile.php?id=1000123', 'https://www.facebook.com/profile.php?id=1000123'],
      ['https://instagram.com/acme.hq', 'https://www.instagram.com/acme.hq'],
      ['https://www.youtube.com/channel/UC123abc', 'https://www.youtube.com/channel/UC123abc'],
      ['https://youtube.com/@Acme', 'https://www.youtube.com/@Acme'],
      ['https://github.com/orgs/acme/people', 'https://github.com/acme'],
      ['https://github.com/acme', 'https://github.com/acme'],
    ];
    for (const [href, expected] of cases) assert.equal(classifySocialUrl(href)?.url ?? null, expected, href);
  });

  it('rejects share links, posts, people, the networks own pages and look-alike hosts', () => {
    for (const href of [
      'https://www.linkedin.com/shareArticle?mini=true&url=x',
      'https://www.linkedin.com/sharing/share-offsite/?url=x',
      'https://www.linkedin.com/in/jane-doe',
      'https://twitter.com/intent/tweet?text=x',
      'https://twitter.com/acme/status/123',
      'https://twitter.com/share',
      'https://www.facebook.com/sharer/sharer.php?u=x',
      'https://www.facebook.com/dialog/share?app_id=1',
      'https://www.facebook.com/acme/posts/123',
      'https://www.instagram.com/p/Cx123/',
      'https://www.youtube.com/watch?v=abc',
      'https://youtu.be/abc',
      'https://github.com/acme/widgets',
      'https://github.com/login',
      'https://gist.github.com/acme',
      'https://developers.facebook.com/acme',
      'https://linkedin.com.evil.example/company/acme',
      'https://notlinkedin.com/company/acme',
      'javascript:alert(1)',
    ]) {
      assert.equal(classifySocialUrl(href), null, href);
    }
  });
});
