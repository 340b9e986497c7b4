import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { csrfToken, tokenMatches } from '../../src/dashboard/csrf.js';
import { escapeHtml, html, linkUrl, SafeHtml } from '../../src/dashboard/html.js';
import { localPath } from '../../src/dashboard/session.js';

describe('the html template', () => {
  it('escapes every interpolated text, in content and in quoted attributes', () => {
    const title = `<script>alert("x")</script> & 'quotes' \`ticks\``;
    assert.equal(
      html`<p title="${title}">${title}</p>`.value,
      '<p title="&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;quotes&#39; &#96;ticks&#96;">' +
        '&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;quotes&#39; &#96;ticks&#96;</p>',
    );
    // An attribute value cannot be closed from inside.
    assert.equal(html`<a href="${'" onmouseover="alert(1)'}">x</a>`.value, '<a href="&quot; onmouseover=&quot;alert(1)">x</a>');
  });

  it('keeps nested templates and explicitly raw text as they are, and escapes each item of a list', () => {
    const items = ['<b>', 'a&b'];
    assert.equal(html`<ul>${items.map((item) => html`<li>${item}</li>`)}</ul>`.value, '<ul><li>&lt;b&gt;</li><li>a&amp;b</li></ul>');
    assert.equal(html`${new SafeHtml('<hr>')}${'<hr>'}`.value, '<hr>&lt;hr&gt;');
  });

  it('renders nothing for null, undefined and false, and numbers and true as text', () => {
    assert.equal(html`[${null}${undefined}${false}${0}${true}${12.5}]`.value, '[0true12.5]');
  });

  it('escapes the characters that matter and nothing else', () => {
    assert.equal(escapeHtml('plain text, äöü — ok'), 'plain text, äöü — ok');
    assert.equal(escapeHtml('&amp;'), '&amp;amp;');
  });

  it('lets only http(s) URLs and local paths into links', () => {
    assert.equal(linkUrl('https://example.com/feed'), 'https://example.com/feed');
    assert.equal(linkUrl('/publications'), '/publications');
    for (const url of [
      'javascript:alert(1)',
      ' JavaScript:alert(1)',
      'data:text/html,x',
      '//evil.example',
      '/\\evil.example',
      'vbscript:x',
      '',
      null,
    ]) {
      assert.equal(linkUrl(url), undefined, String(url));
    }
  });
});

describe('sign-in redirects', () => {
  it('go back only to a local path', () => {
    assert.equal(localPath('/publications/acme/feeds?x=1'), '/publications/acme/feeds?x=1');
    for (const value of ['https://evil.example/', '//evil.example/', '/\\evil.example', 'publications', '/a\nb', undefined, '']) {
      assert.equal(localPath(value), undefined, String(value));
    }
  });
});

describe('CSRF tokens', () => {
  it('are bound to their secret and compared whole', () => {
    const token = csrfToken('secret-one');
    assert.match(token, /^[A-Za-z0-9_-]{43}$/);
    assert.equal(csrfToken('secret-one'), token);
    assert.ok(tokenMatches('secret-one', token));
    assert.ok(!tokenMatches('secret-two', token));
    assert.ok(!tokenMatches('secret-one', token.slice(0, -1)));
    assert.ok(!tokenMatches('secret-one', `${token}x`));
    assert.ok(!tokenMatches('secret-one', ''));
    assert.ok(!tokenMatches('secret-one', undefined));
  });
});
