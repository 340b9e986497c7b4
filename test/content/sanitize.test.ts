import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { sanitizeArticleHtml, sanitizeImportedHtml } from '../../src/content/sanitize.js';

describe('article HTML sanitizing', () => {
  const overlay = '<div class="fixed inset-0 z-50 modal-backdrop" id="login" lang="de"><p class="lead">Hallo</p></div>';

  it('drops class and id from imported HTML, so that it cannot reach the page’s own CSS or DOM globals', () => {
    const html = sanitizeImportedHtml(overlay, 'https://blog.example/post/1');
    assert.equal(html, '<div lang="de"><p>Hallo</p></div>');
  });

  it('keeps class and id in HTML the publisher’s own people write through the API', () => {
    assert.equal(sanitizeArticleHtml(overlay), overlay);
  });

  it('keeps iframes from the listed video hosts and drops others, in both', () => {
    const frames = '<iframe src="https://www.youtube.com/embed/abc"></iframe><iframe src="https://evil.example/x">fallback</iframe>';
    for (const html of [sanitizeArticleHtml(frames), sanitizeImportedHtml(frames)]) {
      assert.equal(html, '<iframe src="https://www.youtube.com/embed/abc"></iframe>');
    }
  });

  it('makes imported relative URLs absolute before checking their scheme', () => {
    const html = sanitizeImportedHtml(
      '<a href="../about">a</a><img src="/i.png" srcset="/s.png 2x"><a href="javascript:x()">j</a>',
      'https://blog.example/post/1',
    );
    assert.equal(
      html,
      '<a href="https://blog.example/about">a</a><img src="https://blog.example/i.png" srcset="https://blog.example/s.png 2x" /><a>j</a>',
    );
  });
});
