import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { extractCompany } from '../../src/leads/research/index.js';
import { feedSiteName } from '../../src/leads/research/extract.js';
import { domainMatchScore } from '../../src/leads/research/name.js';
import { copyrightHolders, isBareDomainLabel, nameFromEvidence, NO_EVIDENCE } from '../../src/leads/research/company-name.js';

// The causes of wrong company names named in issue 14, each on a small page; test/leads/research-corpus.test.ts
// measures the same rules on real saved pages.

const page = (head: string, body = ''): string => `<!doctype html><html><head>${head}</head><body>${body}</body></html>`;
const extract = (html: string, domain: string) => extractCompany(html, `https://${domain}/`, { domain });

describe('company names from the page', () => {
  it('cuts a copyright holder to the words that spell the domain when the rest is a tagline said once', () => {
    const tagline = page(
      '<title>Free Auto Classifieds - Buy &amp; Sell</title>',
      '<p>Established in 2004, MotoClassifieds.US Free Auto Classifieds has grown.</p>' +
        '<footer>© Copyright 2004 - 2014 MotoClassifieds.US Free Automotive Advertising</footer>',
    );
    assert.equal(extract(tagline, 'motoclassifieds.us').name, 'MotoClassifieds.US');
    // A longer name the page repeats is the name.
    const repeated = page(
      '<title>Virtual Offices | Meeting Rooms</title>',
      '<p>Acme Business Center is located off I-5.</p><footer>© 2014 Acme Business Center</footer>',
    );
    assert.equal(extract(repeated, 'acme.com').name, 'Acme Business Center');
  });

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
    // A possessive the domain does not spell is the sentence's; one it spells is the name's.
    assert.equal(extract(page("<title>Welcome to Microsoft's Homepage</title>"), 'microsoft.com').name, 'Microsoft');
    assert.equal(extract(page("<title>Macy's - Shop Fashion Clothing</title>"), 'macys.com').name, "Macy's");
    const online = page(
      '<title>Books | Cheap Books | Online at Book People</title><meta name="description" content="Discover books at Book People">',
    );
    assert.equal(extract(online, 'thebookpeople.co.uk').name, 'Book People');
  });

  it('drops the tagline a site name adds to the words the title calls the site by', () => {
    const ld = (name: string, title: string) =>
      page(`<title>${title}</title><script type="application/ld+json">{"@type":"Organization","name":"${name}"}</script>`);
    assert.equal(extract(ld('Enterkomputer Toko Rakit PC', 'Enterkomputer - Toko Komputer, Rakit PC'), 'enterkomputer.com').name, 'Enterkomputer');
    // Kept: the title never calls the site by the short name alone, or the rest is a name joined on.
    assert.equal(extract(ld('Acme Widgets Online', 'Widgets | Acme Widgets Online'), 'acmewidgets.com').name, 'Acme Widgets Online');
    assert.equal(extract(ld('Acme & Co', 'Acme & Co | Acme'), 'acme.com').name, 'Acme & Co');
  });

  it('completes a short logo name with the common words the domain adds to it', () => {
    const logo = (alt: string) => page('<title>Home</title>', `<img src="/logo.png" alt="${alt}">`);
    assert.equal(extract(logo('Majestic'), 'majesticshowers.com').name, 'Majestic Showers');
    // Not with a fragment or a short word: a city's initials, "me".
    assert.equal(extract(logo('Contigo'), 'contigosf.com').name, 'Contigo');
    assert.equal(extract(logo('Blue Spoon'), 'bluespoonme.com').name, 'Blue Spoon');
  });

  it("does not take the words that open a description's sentence for part of the name", () => {
    const visit = page(
      '<title>Recenze z Cest | Recenze Hotelů</title><meta name="description" content="Navštiv Zoover, nezávislý portál s recenzemi!">',
    );
    assert.equal(extract(visit, 'zoover.cz').name, 'Zoover');
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

  it('a host name of the domain is not a name; the site address a copyright line names is kept, less "www."', () => {
    assert.equal(isBareDomainLabel('zebra.acme-e.com', 'acme-e.com'), true);
    assert.equal(isBareDomainLabel('www.acme.com', 'acme.com'), true);
    assert.equal(isBareDomainLabel('Booking.com', 'booking.com'), false);
    const footer = { ...NO_EVIDENCE, holders: copyrightHolders('Copyright © 1995-2014 BlueDogInk.com') };
    assert.deepEqual(footer.holders, ['BlueDogInk.com']);
    assert.equal(nameFromEvidence('bluedogink.com', footer), 'BlueDogInk.com');
    const www = { ...NO_EVIDENCE, holders: copyrightHolders('© 2014 www.focalprice.com') };
    assert.equal(nameFromEvidence('focalprice.com', www), 'focalprice.com');
  });

  it('a title of product names gives way to the owner the copyright line names; "--" splits a title', () => {
    const html = page(
      '<title>Car Loans | Car Finance | Novated Lease Australia</title>',
      '<h1>Car Loans Australia</h1><div>© Copyright 2003-2014 FinCar Pty Ltd. </div>',
    );
    assert.equal(extract(html, 'fincar.com.au').name, 'FinCar Pty Ltd');
    assert.equal(extract(page('<title>ToledoCars.com -- Price Quotes, Research</title>'), 'toledocars.com').name, 'ToledoCars.com');
  });

  it('does not read the domain across the end of a sentence; takes the logo name the text repeats instead', () => {
    const html = page(
      '<title>Denver Accident Attorney, Truck Accident, Car, Motorcycle</title>' +
        '<meta name="description" content="Denver car accident attorney, the right place to call. Paul is a personal injury lawyer.">',
      '<a href="/"><img src="/images/logo.png" alt="The Paul Wilkinson Law Firm LLC - Car Wreck Lawyer in Denver, CO."></a>' +
        '<p>You need The Paul Wilkinson Law Firm, LLC to represent you.</p>' +
        '<p>Welcome to The Paul Wilkinson Law Firm, LLC</p>',
    );
    assert.equal(extract(html, 'callpaul.com').name, 'The Paul Wilkinson Law Firm LLC');
    // Said once, or sharing no word with the domain, the logo's name is not taken for a domain it does not spell.
    const once = html.replace('<p>Welcome to The Paul Wilkinson Law Firm, LLC</p>', '');
    assert.notEqual(extract(once, 'callpaul.com').name, 'The Paul Wilkinson Law Firm LLC');
    assert.notEqual(extract(html, 'calljoe.com').name, 'The Paul Wilkinson Law Firm LLC');
  });

  it('reads a practice named for its practitioner, whose surname the domain starts with', () => {
    const dentist = page('<title>Cosmetic Dentist Shawnee KS Richard M. Dervin DDS</title>');
    assert.equal(extract(dentist, 'dervindental.com').name, 'Richard M. Dervin DDS');
    const doctor = page('<title>Family Medicine in Austin</title>', '<a href="/"><img src="/logo.png" alt="Dr. Jane Okafor, MD"></a>');
    assert.equal(extract(doctor, 'okaforclinic.com').name, 'Dr. Jane Okafor, MD');
  });

  it("reads a firm's initials and its legal form written as the domain", () => {
    const firm = page('<title>Employment Lawyers | Washington, DC</title>', '<footer>© 2024 Katz Banks Kumin LLP</footer>');
    assert.equal(extract(firm, 'kbkllp.com').name, 'Katz Banks Kumin LLP');
    assert.equal(domainMatchScore('Smith, Jones & Brown, P.C.', 'sjbpc.com'), 60);
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
    // A name in Hangul run into the site's address: two words, and the address is a name the domain spells.
    assert.deepEqual(copyrightHolders('copyright. 2022. 익산몰iksanmall.com. All rights reserved.'), ['익산몰 iksanmall.com']);
    // The site's address after the name, in parentheses.
    assert.deepEqual(copyrightHolders('© 2009-2015 キャラクターショーファンサイト(charactershow.jp) All rights reserved.'), [
      'キャラクターショーファンサイト',
    ]);
    const runTogether = page('<title>익산몰</title>', '<p>copyright. 2022. <a href="/"><b>익산몰iksanmall.com</b></a>. All rights reserved.</p>');
    assert.equal(extract(runTogether, 'iksanmall.com').name, 'iksanmall.com');
  });

  it('matches a domain that abbreviates the words of a name, not one that shares whole words with a tagline', () => {
    assert.equal(extract(page('<title>The Go Programming Language</title>'), 'golang.org').name, 'The Go Programming Language');
    assert.ok(domainMatchScore('National Geographic', 'natgeo.com') > 0);
    assert.equal(domainMatchScore('Azureva, résidence vacances, location saisonnière été', 'azureva-vacances.com'), 0);
  });

  it('matches a domain that starts with the name less its legal form', () => {
    // longolabs.com: "longo" starts the label although "longoinc" does not.
    assert.ok(domainMatchScore('Longo, Inc.', 'longolabs.com') >= 50);
    assert.equal(extract(page('<title>Longo, Inc.  </title>'), 'longolabs.com').name, 'Longo, Inc.');
    assert.equal(domainMatchScore('Lo, Inc.', 'longolabs.com'), 0);
  });

  it('backs a one-word title part only where the page states it as a name', () => {
    // The logo's alt text mentions a place; it does not name the owner "London".
    const place = page(
      '<title>Bedroom Furniture Beds and Furnishings, Bedroom Suites Chairs | London</title>' +
        '<meta name="description" content="Bedroom furniture and bedroom suites from Focus Furniture London.">',
      '<a href="/"><img src="/top.gif" alt="bedroom furniture london"></a>',
    );
    assert.notEqual(extract(place, 'focusfurnishing.com').name, 'London');
    // The whole alt text, or its first word, is a name.
    const logo = (alt: string) => page('<title>Bedroom Furniture | Zenith</title>', `<a href="/"><img src="/logo.png" alt="${alt}"></a>`);
    assert.equal(extract(logo('Zenith'), 'example.com').name, 'Zenith');
    assert.equal(extract(logo('Zenith logo'), 'example.com').name, 'Zenith');
    assert.notEqual(extract(logo('bedroom furniture by zenith'), 'example.com').name, 'Zenith');
  });

  it('reads the name an hCard gives the organization', () => {
    const html = page(
      '<title>Wedding Ministers &amp; Officials of Atlanta | Serving the Southeast</title>',
      '<div class="vcard"><span class="fn org"><span class="organization-name">Wedding Ministers &amp; Officials of Atlanta</span></span></div>',
    );
    assert.equal(extract(html, 'wedgeorgia.com').name, 'Wedding Ministers & Officials of Atlanta');
    // Without the hCard nothing backs either part of that title.
    const bare = page('<title>Wedding Ministers &amp; Officials of Atlanta | Serving the Southeast</title>');
    assert.equal(extract(bare, 'wedgeorgia.com').name, undefined);
  });

  it('reads the site name in the titles of its feed links', () => {
    assert.equal(feedSiteName('Decatur Conference Center & Hotel » Feed'), 'Decatur Conference Center & Hotel');
    assert.equal(feedSiteName('Longo, Inc. » Home Comments Feed'), 'Longo, Inc.');
    assert.equal(feedSiteName('Longo, Inc. RSS Feed'), 'Longo, Inc.');
    assert.equal(feedSiteName('Latest posts'), '');
    const html = page(
      '<title>Decatur Conference Center &amp; Hotel | Decatur, Alabama</title>' +
        '<link rel="alternate" type="application/rss+xml" title="Decatur Conference Center &amp; Hotel » Feed" href="/c/feed/">',
    );
    assert.equal(extract(html, 'hoteldecatur.com').name, 'Decatur Conference Center & Hotel');
  });

  it('takes a title that is one clean name over the domain label run together', () => {
    const name = (title: string) => extract(page(`<title>${title}</title>`), 'hoteldecatur.com').name;
    assert.equal(name('Decatur Conference Center &amp; Hotel'), 'Decatur Conference Center & Hotel');
    assert.equal(name('Wedding Ministers &amp; Officials of Atlanta - Home'), 'Wedding Ministers & Officials of Atlanta');
    // One word, a section title, a sentence or a title of several parts is not taken for the name.
    assert.equal(name('Kitchen'), undefined);
    assert.equal(name('Latest News'), undefined);
    assert.equal(name('We have the best rooms in town!'), undefined);
    assert.equal(name('Rooms and suites near the river'), undefined);
    assert.equal(name('Conference Rooms | Wedding Venues'), undefined);
  });

  it('takes the site address out of a title part, and the name after "from" or "von" whole', () => {
    const von = page('<title>Hardware, Notebooks &amp; Software von Acmeshop.de</title><meta name="author" content="Acmeshop.de">');
    assert.equal(extract(von, 'acmeshop.de').name, 'Acmeshop.de');
    const directory = page(
      '<title>Link-Verzeichnis spid-pro.de</title>' +
        '<link rel="alternate" type="application/rss+xml" title="Link-Verzeichnis spid-pro.de - RSS Feed" href="/feed/">',
    );
    assert.equal(extract(directory, 'spid-pro.de').name, 'spid-pro.de');
    const from = page(
      '<title>Transfection Reagents | Kits from Altogen Biosystems</title>' +
        '<meta name="description" content="Altogen Biosystems provides in vivo transfection reagents.">',
    );
    assert.equal(extract(from, 'altogen.com').name, 'Altogen Biosystems');
    // Backed by nothing, the words that spell the domain.
    assert.equal(extract(page('<title>Reagents and Kits from Altogen Biosystems</title>'), 'altogen.com').name, 'Altogen');
  });

  it('a title part of a dozen words is a sentence around the name, however often the page says it', () => {
    const tagline = '大好きなキャラクターにあえる屋内型コミュニケーションパーク SANRIO PUROLAND!';
    const html = page(`<title>${tagline}</title>`, `<h2>${tagline}</h2><p>${tagline}</p>`);
    assert.equal(extract(html, 'puroland.jp').name, 'PUROLAND', 'the words that spell the domain');
  });

  it('a common noun the title capitalizes before the name is not part of it', () => {
    const carrier = page(
      '<title>Перевізник Vilartrans - Головна сторінка</title>' +
        '<meta name="description" content="Міжнародний автобусний перевізник Vilartrans, інформація по рейсах">',
    );
    assert.equal(extract(carrier, 'vilartrans.com').name, 'Vilartrans');
    // Written with a capital in the page's own sentence too, the longer form is the name.
    const hotel = page('<title>Hotel Astoria - Home</title><meta name="description" content="Welcome to Hotel Astoria, on the lake since 1901.">');
    assert.equal(extract(hotel, 'astoria.ch').name, 'Hotel Astoria');
  });

  it("passes over site-name metadata copied with another site's template", () => {
    const copied = page(
      '<title>Astrolytes | A Real-time peer-to-peer Cyber Threat Sharing Platform</title>' +
        '<meta property="og:site_name" content="Backfeed"><meta property="og:url" content="http://backfeed.cc/">',
    );
    assert.equal(extract(copied, 'astrolytes.com').name, 'Astrolytes');
    // A site name the page's text uses stays: a brand whose page on a second domain points at its main one.
    const brand = page(
      '<title>CTshirts.co.uk | Men\'s Shirts</title><meta property="og:site_name" content="Charles Tyrwhitt">' +
        '<link rel="canonical" href="https://www.charlestyrwhitt.com/uk/home">',
      '<footer>© Charles Tyrwhitt LLP</footer>',
    );
    assert.equal(extract(brand, 'ctshirts.co.uk').name, 'Charles Tyrwhitt');
  });

  it('a heading or a paragraph that only repeats the title backs no longer form of it', () => {
    const title = 'The Floor Barn Flooring store w/ Discount Prices on Brand Name Floors';
    const html = page(`<title>${title}</title>`, `<h1 style="position:absolute;top:-10px">${title}</h1><h1><img alt="Logo"></h1>`);
    assert.equal(extract(html, 'floorbarn.com').name, 'The Floor Barn');
    const sentence = 'Larsen &amp; Toubro (L&amp;T) is a technology-driven USD 14 billion company.';
    const banner = page(`<title>${sentence}</title>`, `<div class="banner"><p>${sentence}</p></div><p>Our businesses</p>`);
    assert.equal(extract(banner, 'larsentoubro.com').name, 'Larsen & Toubro');
  });

  it('reads the text of block elements apart, as a browser lays them out', () => {
    // "© Microlink" and the footer's links are separate blocks, not one run "© MicrolinkTermsPrivacy".
    const footer = page(
      '<title>Turns any website into data</title>',
      '<footer><div><p>© Microlink</p><div style="display:inline"><a href="/tos">Terms</a></div>' +
        '<div style="display:inline"><a href="/privacy">Privacy</a></div></div></footer>',
    );
    assert.equal(extract(footer, 'microlink.io').name, 'Microlink');
    // Inline elements stay in their line: "© 2015 <b>Acme</b> <span>Widgets</span>" is one holder.
    const inline = page('<title>Home</title>', '<footer><p>© 2015 <b>Acme</b> <span>Widgets</span></p><p>Terms</p></footer>');
    assert.equal(extract(inline, 'acmewidgets.com').name, 'Acme Widgets');
  });

  it('reads the whole domain where the title spells only its first words, and drops "Home Page"', () => {
    const first = page('<title>Wall Decor | Metal Wall Art</title>', '<p>Welcome to Wall Decor and Home Accents, a family store.</p>');
    assert.equal(extract(first, 'walldecorandhomeaccents.com').name, 'Wall Decor and Home Accents');
    const homePage = page('<title>Great Music Products Home Page</title>', '<footer>2015 GREAT MUSIC</footer>');
    assert.equal(extract(homePage, 'greatmusicproductsonline.com').name, 'Great Music Products');
  });

  it('matches a name in another script with the domain through its transliteration', () => {
    assert.equal(extract(page('<title>Вести Сочи | Новости Сочи</title>'), 'vesti-sochi.tv').name, 'Вести Сочи');
    assert.equal(extract(page('<title>سامانه رزرواسیون | یادمان</title>'), 'yadman.net').name, 'یادمان');
    // Within a longer part, only the words that spell the domain: no "online shop" label before the name.
    const shop = page('<title>Интернет-магазин «Спортмастер» — спортивные товары</title>');
    assert.equal(extract(shop, 'sportmaster.ru').name, 'Спортмастер');
    assert.equal(domainMatchScore('Müller Bäckerei', 'mueller-baeckerei.de'), 100);
    // Chinese characters through their pinyin, simplified or traditional; the name is the characters that spell it.
    assert.equal(extract(page('<title>淘宝网(淘寶網) 全球站</title>'), 'taobao.com').name, '淘宝');
    assert.equal(domainMatchScore('聯合新聞網', 'lianhe.com.tw'), domainMatchScore('Lianhe Xinwen Wang', 'lianhe.com.tw'));
  });

  it('writes a name run together in lower case as the page writes it in words', () => {
    const html = page(
      '<title>floridahospital | Physician Employment Opportunities</title>',
      '<footer>Copyright © 2014 Florida Hospital. All Rights Reserved.</footer>',
    );
    assert.equal(extract(html, 'floridahospitalphysicianjobs.com').name, 'Florida Hospital');
    assert.equal(extract(page('<title>floridahospital | Jobs</title>'), 'floridahospitalphysicianjobs.com').name, 'floridahospital');
  });

  it('keeps a possessive and a name joined by "&"; reads a copyright notice broken over two source lines', () => {
    const possessive = page(
      '<title>Acmes Cheese House: Swiss Cheese | Bologna</title><meta name=description content="Acme\'s Cheese House | Swiss Cheese | Bologna | Gifts">',
      "<footer>© 2009 Acme's Cheese\nHouse. All rights reserved.</footer>",
    );
    assert.equal(extract(possessive, 'cheesehouse.com').name, 'Acmes Cheese House');
    assert.deepEqual(copyrightHolders("© 2009 Acme's Cheese\n   House. All rights reserved."), ["Acme's Cheese House"]);
    // Joining lines never backtracks over a page of line breaks or spaces (a quadratic pattern would not end here).
    assert.deepEqual(copyrightHolders('\n'.repeat(200_000) + ' '.repeat(200_000)), []);
    // A notice that goes on past its line: the trademark sign and the unclosed list of hosts are not the name.
    assert.deepEqual(copyrightHolders('Copyright © 1994-2007 W3C® (MIT, ERCIM,\n\nKeio), All Rights Reserved.'), ['W3C']);
    const joined = page('<title>Sea Breeze Resort, Hotel and Spa</title>', '<footer>© Copyright Sea Breeze Hotel & Spa</footer>');
    assert.equal(extract(joined, 'seabreezehotel.com').name, 'Sea Breeze Hotel & Spa');
  });

  it('drops a site label, a place after the name and a home-page word; takes the name before its own initials', () => {
    const label = page('<title>Official UK Acme website</title><meta name="author" content="Official UK Acme website">');
    assert.equal(extract(label, 'acme.co.uk').name, 'Acme');
    const place = page(
      '<title>Stoneridge Homes Huntsville, AL | Custom Home Builders</title>',
      '<footer>© 2015 Stoneridge Homes Huntsville, AL</footer>',
    );
    assert.equal(extract(place, 'stoneridgehomesinc.com').name, 'Stoneridge Homes');
    assert.equal(extract(page('<meta property="og:site_name" content="Acme Homepage">'), 'acme.co.uk').name, 'Acme');
    const initials = page('<title>DCMI Home: Dublin Core® Metadata Initiative (DCMI)</title>');
    assert.equal(extract(initials, 'dublincore.org').name, 'Dublin Core Metadata Initiative');
  });

  it("takes the logo's name the title starts with, a quoted name, and the address the site calls itself by", () => {
    const logo = page(
      "<title>Charles Tyrwhitt for Men's Shirts, Suits &amp; Ties</title>",
      '<a href="/"><img src="/logo.png" alt="Charles Tyrwhitt – Jermyn Street London"></a>',
    );
    assert.equal(extract(logo, 'ctshirts.co.uk').name, 'Charles Tyrwhitt');
    const quoted = page('<title>Сумки оптом в Новосибирске - Купить сумки | «S-Style» - Сумки и аксессуары</title>');
    assert.equal(extract(quoted, 'sumka-style.ru').name, 'S-Style');
    // In quotes inside a part, when the page's text repeats it; not a quoted phrase the page does not use as a name.
    const inPart = '<title>Аренда квартир в Москве. Группа компаний "Континент-Недвижимость"</title>';
    assert.equal(extract(page(inPart, '<p>Компания "Континент-Недвижимость" основана в 2001 году.</p>'), 'makler.su').name, 'Континент-Недвижимость');
    assert.notEqual(extract(page(inPart), 'makler.su').name, 'Континент-Недвижимость');
    const address = page(
      '<title>Bike Locks, Kryptonite, Abus, Bicycle lock</title>',
      '<a href="/"><img src="/logo.jpg" alt="Bike-Locks.com"></a><footer>© 2010 Bike-Locks.com. All Rights Reserved.</footer>',
    );
    assert.equal(extract(address, 'bike-locks.com').name, 'Bike-Locks.com');
    // A logo's text that is its image's name, or says "logo", names the company without that word.
    assert.equal(extract(page('<title>home</title>', '<img src="images/aace_logo.png" alt="aace_logo" id="logo">'), 'aace.gr').name, 'aace');
    assert.equal(extract(page('<title>Welcome</title>', '<a href="/"><img src="/l.png" alt="Acme Logo"></a>'), 'acme.com').name, 'Acme');
    // Without the address on the page, the title's words are the name.
    assert.equal(extract(page('<title>Bike Locks, Kryptonite, Abus, Bicycle lock</title>'), 'bike-locks.com').name, 'Bike Locks');
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
      // The address alone: a news or blog section, or a headline written into it.
      '<link rel="canonical" href="https://acmewidgets.com/news/acme-buys-beta">',
      '<meta property="og:url" content="https://acmewidgets.com/articles/13/07/18/acme-buys-beta">',
      '<link rel="canonical" href="https://acmewidgets.com/acme-buys-beta-for-ten-million-dollars">',
    ];
    for (const mark of marks) {
      const facts = extract(page('<title>Acme buys Beta | Acme Widgets</title>' + description + mark), 'acmewidgets.com');
      assert.equal(facts.description, null, mark);
      assert.equal(facts.name, 'Acme Widgets', mark);
    }
  });

  it("a page's own short address is no article's", () => {
    for (const own of ['/skin-care-resources-santa-monica/', '/contact.htm', '/newsletter', '/de']) {
      const html = page(`<title>Acme Widgets</title><link rel="canonical" href="https://acmewidgets.com${own}">${description}`);
      assert.equal(extract(html, 'acmewidgets.com').description, 'Acme Widgets makes fasteners for builders.', own);
    }
  });

  it('says nothing rather than repeat the title, a template placeholder or empty template fields', () => {
    const title = '<title>Acme Widgets</title>';
    for (const content of ['Acme Widgets', '$metaDescriptionE', ' : Contact Us - ']) {
      const html = page(`${title}<meta name="description" content="${content}">`);
      assert.equal(extract(html, 'acmewidgets.com').description, null, content);
    }
  });

  it("is not the title's tagline or its page label again; a sentence the title carries may be", () => {
    const tagline = page(
      '<title>Acme · Build software better, together.</title><meta name="description" content="Build software better, together.">' +
        '<meta property="og:description" content="Acme is the best place to build software together.">',
    );
    assert.equal(extract(tagline, 'acme.com').description, 'Acme is the best place to build software together.');
    const label = page('<title>Home | Acme Cinemas</title><meta name="description" content="Home at Acme Cinemas">');
    assert.equal(extract(label, 'acmecinemas.co.uk').description, null);
    // Which page this is and a name, with no title part to compare with: still nothing the company does.
    for (const only of ['Home Page of Portable UPnP', 'Welcome to Acme Cinemas!', 'Acme Cinemas home page']) {
      const html = page(`<title>acme.org - Developer resources</title><meta name="description" content="${only}">`);
      assert.equal(extract(html, 'acme.org').description, null, only);
    }
    const more = 'Welcome to Acme Cinemas, the best seats in town';
    assert.equal(extract(page(`<title>Acme</title><meta name="description" content="${more}">`), 'acme.org').description, more);
    const sentence = 'Learn how to buy on Amazon, from phones and shoes to tablets and gift cards!';
    const carried = page(`<title>Compra Afuera - ${sentence}</title><meta name="description" content="${sentence}">`);
    assert.equal(extract(carried, 'compraafuera.com').description, sentence);
    // Japanese writes no spaces: a long sentence the title carries is no short tagline ("an indoor park where you
    // meet the characters you love"); a short slogan is.
    const japanese = '大好きなキャラクターにあえる屋内型コミュニケーションパーク SANRIO PUROLAND!';
    const park = page(`<title>サンリオピューロランド | ${japanese}</title><meta property="og:description" content="${japanese}">`);
    assert.equal(extract(park, 'puroland.jp').description, japanese);
    const slogan = page('<title>花園被服 | 話題のサイト</title><meta name="description" content="話題のサイト">');
    assert.equal(extract(slogan, 'hanazonohifuku.com').description, null);
  });

  it('comes from the page description of a home page that a theme marks og:type "article"', () => {
    for (const own of ['<link rel="canonical" href="https://acme.de/">', '<meta property="og:url" content="https://acme.de/de">']) {
      const html = page(`<title>Acme</title><meta property="og:type" content="article">${own}${description}`);
      assert.equal(extract(html, 'acme.de').description, 'Acme Widgets makes fasteners for builders.', own);
    }
  });

  it("says nothing when it is a shop template's default, the title's keyword list again, or only the name and address", () => {
    for (const placeholder of ['tag line', 'Boutique propulsée par PrestaShop', 'Shop powered by PrestaShop', 'Just another WordPress site']) {
      assert.equal(extract(page(`<title>Acme</title><meta name="description" content="${placeholder}">`), 'acme.com').description, null, placeholder);
    }
    const keywords = page(
      '<title>Acme Cheese: Swiss Cheese| Bologna | Chocolates</title><meta name="description" content="Acme Cheese | Swiss Cheese| Bologna | Chocolates | Gifts">',
    );
    assert.equal(extract(keywords, 'acme.com').description, null);
    const address = page('<title>Olivia The Shop</title><meta name="description" content="♥ Olivia the Shop ♥ www.oliviatheshop.com ♥">');
    assert.equal(extract(address, 'oliviatheshop.com').description, null);
    // A list that says more than the title does describe.
    const list = page('<title>Acme</title><meta name="description" content="Widgets | Gadgets | Repairs in Leeds">');
    assert.equal(extract(list, 'acme.com').description, 'Widgets | Gadgets | Repairs in Leeds');
  });

  it("a home page with an SEO plugin's published time, or a section's index page, is no article", () => {
    const home = page(
      `<title>Acme</title><link rel="canonical" href="https://acme.com/"><meta property="article:published_time" content="2013-11-28">${description}`,
    );
    assert.equal(extract(home, 'acme.com').description, 'Acme Widgets makes fasteners for builders.');
    const post = page(
      `<title>Acme</title><link rel="canonical" href="https://acme.com/hello"><meta property="article:published_time" content="2013-11-28">${description}`,
    );
    assert.equal(extract(post, 'acme.com').description, null);
    const index = page(
      `<title>Acme News</title><meta property="og:type" content="article"><link rel="canonical" href="https://acme.com/news/index">${description}`,
    );
    assert.equal(extract(index, 'acme.com').description, 'Acme Widgets makes fasteners for builders.');
    // An index page under a dated path is an article's own page.
    const dated = page(`<title>Saturn</title><link rel="canonical" href="https://acme.com/2013/07/18/tech/saturn/index.html">${description}`);
    assert.equal(extract(dated, 'acme.com').description, null);
  });

  it('is only the Organization or the page description: a Twitter card alone says nothing of the company', () => {
    const card = page('<title>Feta Cheese | Acme</title><meta name="twitter:description" content="This feta cheese is smooth and creamy.">');
    assert.equal(extract(card, 'acme.com').description, null);
  });
});
