import { createHash } from 'node:crypto';

// The dashboard's one stylesheet and one script, kept here as text so that `tsc` ships them with the code: no
// build step, no files to copy. Each is served under a URL that carries its hash, so browsers may cache it for good.

const CSS = `
:root { --ink: #1d2330; --muted: #5b6475; --line: #d9dde5; --bg: #f6f7f9; --card: #fff; --accent: #1f5fbf;
  --accent-ink: #fff; --danger: #b42318; --ok: #067647; --warn: #b54708; --radius: 6px; color-scheme: light; }
* { box-sizing: border-box; }
html { -webkit-text-size-adjust: 100%; }
body { margin: 0; font: 16px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif;
  color: var(--ink); background: var(--bg); }
a { color: var(--accent); }
a:focus-visible, button:focus-visible, input:focus-visible, select:focus-visible, textarea:focus-visible, summary:focus-visible {
  outline: 3px solid #f5b400; outline-offset: 2px; }
.skip { position: absolute; left: -999px; top: 0; background: var(--card); padding: .5rem 1rem; z-index: 10; }
.skip:focus { left: 1rem; }
.vh { position: absolute; width: 1px; height: 1px; margin: -1px; padding: 0; border: 0; overflow: hidden; clip: rect(0 0 0 0); clip-path: inset(50%); white-space: nowrap; }
header.top { background: var(--ink); color: #fff; }
header.top .bar { display: flex; flex-wrap: wrap; align-items: center; gap: .25rem 1rem; max-width: 72rem; margin: 0 auto; padding: .6rem 1rem; }
header.top .brand { color: #fff; font-weight: 700; text-decoration: none; margin-right: auto; }
header.top nav ul { display: flex; flex-wrap: wrap; gap: .25rem .9rem; list-style: none; margin: 0; padding: 0; }
header.top nav a { color: #dfe6f3; text-decoration: none; padding: .2rem 0; }
header.top nav a[aria-current="page"] { color: #fff; border-bottom: 2px solid #fff; }
header.top .who { display: flex; align-items: center; gap: .6rem; color: #c3cbd9; font-size: .9rem; }
header.top .who button { background: transparent; color: #fff; border: 1px solid #8290a8; padding: .2rem .6rem; white-space: nowrap; }
main { max-width: 72rem; margin: 0 auto; padding: 1rem; }
main.narrow { max-width: 28rem; }
.narrow-form { max-width: 28rem; }
h1 { font-size: 1.6rem; line-height: 1.25; margin: .5rem 0 1rem; overflow-wrap: anywhere; }
h2 { font-size: 1.2rem; margin: 1.5rem 0 .5rem; }
.card { background: var(--card); border: 1px solid var(--line); border-radius: var(--radius); padding: 1rem; margin: 0 0 1rem; }
.card > h2:first-child, .secret > h2:first-child { margin-top: 0; }
.muted { color: var(--muted); }
.crumbs { font-size: .9rem; margin: .25rem 0 0; color: var(--muted); }
.tabs { display: flex; flex-wrap: wrap; gap: .25rem; list-style: none; padding: 0; margin: 0 0 1rem; border-bottom: 1px solid var(--line); }
.tabs a { display: block; padding: .45rem .8rem; text-decoration: none; border-radius: var(--radius) var(--radius) 0 0; }
.tabs a[aria-current="page"] { background: var(--card); border: 1px solid var(--line); border-bottom-color: var(--card); margin-bottom: -1px; color: var(--ink); }
form.stack { display: grid; gap: .8rem; }
form.inline { display: flex; flex-wrap: wrap; gap: .5rem; align-items: flex-end; margin: 0; }
.field { display: grid; gap: .25rem; }
.field label, .field legend { font-weight: 600; }
.field .hint { font-size: .85rem; color: var(--muted); }
.field .error { color: var(--danger); font-size: .9rem; font-weight: 600; }
fieldset { border: 1px solid var(--line); border-radius: var(--radius); padding: .5rem .8rem .8rem; margin: 0; }
.checks { display: grid; gap: .3rem; }
.checks label { font-weight: 400; display: flex; gap: .5rem; align-items: baseline; }
input[type=text], input[type=email], input[type=password], input[type=url], input[type=search], select, textarea {
  width: 100%; font: inherit; padding: .5rem .6rem; border: 1px solid #aab2c0; border-radius: var(--radius); background: #fff; color: var(--ink); }
form.inline input, form.inline select { width: auto; min-width: 10rem; }
[aria-invalid="true"] { border-color: var(--danger); box-shadow: 0 0 0 1px var(--danger); }
textarea { min-height: 6rem; }
button, .button { font: inherit; display: inline-block; padding: .5rem 1rem; border-radius: var(--radius); border: 1px solid var(--accent);
  background: var(--accent); color: var(--accent-ink); cursor: pointer; text-decoration: none; line-height: 1.3; }
button.secondary, .button.secondary { background: #fff; color: var(--accent); }
button.danger { background: #fff; color: var(--danger); border-color: var(--danger); }
button.small { padding: .25rem .6rem; font-size: .9rem; }
.table-wrap { position: relative; overflow-x: auto; background: var(--card); border: 1px solid var(--line); border-radius: var(--radius); margin: 0 0 1rem; }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; padding: .5rem .7rem; border-bottom: 1px solid var(--line); vertical-align: top; }
th { font-size: .85rem; text-transform: uppercase; letter-spacing: .03em; color: var(--muted); white-space: nowrap; }
tr:last-child td { border-bottom: 0; }
td.title { overflow-wrap: anywhere; min-width: 12rem; }
code, .mono { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: .92em; overflow-wrap: anywhere; }
.notice { border-left: 4px solid var(--ok); background: #ecfdf3; padding: .7rem 1rem; border-radius: var(--radius); margin: 0 0 1rem; }
.alert { border-left: 4px solid var(--danger); background: #fef3f2; padding: .7rem 1rem; border-radius: var(--radius); margin: 0 0 1rem; }
.alert ul { margin: .3rem 0 0; padding-left: 1.2rem; }
.secret { border: 2px solid var(--warn); background: #fffaeb; padding: 1rem; border-radius: var(--radius); margin: 0 0 1rem; }
.secret .key { display: flex; flex-wrap: wrap; gap: .5rem; align-items: center; }
.secret output { display: block; flex: 1 1 20rem; background: #fff; border: 1px solid var(--line); padding: .5rem; border-radius: var(--radius); }
.badge { display: inline-block; font-size: .8rem; padding: .05rem .5rem; border-radius: 999px; border: 1px solid var(--line); background: #fff; white-space: nowrap; }
.badge.completed, .badge.succeeded, .badge.enabled { color: var(--ok); border-color: var(--ok); }
.badge.failed { color: var(--danger); border-color: var(--danger); }
.badge.running, .badge.pending, .badge.scraping, .badge.generating, .badge.sending { color: var(--warn); border-color: var(--warn); }
.badge.rejected, .badge.disabled { color: var(--danger); border-color: var(--danger); }
.badge.default { color: var(--accent); border-color: var(--accent); }
.actions { display: flex; flex-wrap: wrap; gap: .4rem; }
.buttons { display: flex; flex-wrap: wrap; gap: .6rem 1rem; align-items: center; }
.small { font-size: .9rem; }
.nowrap { white-space: nowrap; }
h3 { font-size: 1rem; margin: 1rem 0 .4rem; }
.editor-grid { display: grid; gap: 1rem; grid-template-columns: minmax(0, 3fr) minmax(16rem, 2fr); align-items: start; }
.editor-grid textarea { min-height: 16rem; font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: .92em; }
ul.variables { list-style: none; margin: 0; padding: 0; display: grid; gap: .35rem; }
ul.variables li { font-size: .9rem; }
button.chip { padding: .1rem .45rem; background: #fff; color: var(--accent); border-color: #aab2c0; }
details.sample summary { cursor: pointer; font-weight: 600; }
details.sample .stack { display: grid; gap: .8rem; margin-top: .6rem; }
.email { border: 1px solid var(--line); border-radius: var(--radius); padding: .8rem 1rem; background: #fbfcfd; }
.email-subject { margin: 0 0 .6rem; overflow-wrap: anywhere; }
pre.email-body { margin: 0; white-space: pre-wrap; overflow-wrap: anywhere; font: inherit; }
ol.steps { list-style: none; margin: 0; padding: 0; display: flex; flex-wrap: wrap; gap: .4rem 1.2rem; }
ol.steps li { display: flex; gap: .4rem; align-items: baseline; font-size: .9rem; }
meter { display: block; width: 100%; max-width: 20rem; height: 1rem; margin-top: .3rem; }
.pager { display: flex; flex-wrap: wrap; gap: .5rem 1rem; align-items: center; }
.placeholder { border: 2px dashed var(--line); padding: .8rem 1rem; border-radius: var(--radius); color: var(--muted); }
.grid2 { display: grid; gap: 1rem; grid-template-columns: repeat(auto-fit, minmax(18rem, 1fr)); }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: .3rem 1rem; margin: 0; }
dl.facts dt { color: var(--muted); }
dl.facts dd { margin: 0; overflow-wrap: anywhere; }
@media (max-width: 40rem) {
  body { font-size: 15px; }
  main { padding: .75rem; }
  h1 { font-size: 1.35rem; }
  form.inline { display: grid; }
  form.inline input, form.inline select { width: 100%; }
  dl.facts { grid-template-columns: 1fr; }
  .editor-grid { grid-template-columns: 1fr; }
  dl.facts dd { margin-bottom: .4rem; }
}
`;

const JS = `
"use strict";
document.addEventListener("click", function (event) {
  var button = event.target.closest && event.target.closest("[data-copy]");
  if (!button) return;
  var source = document.getElementById(button.getAttribute("data-copy"));
  if (!source) return;
  var text = source.textContent.trim();
  var done = function () { button.textContent = "Copied"; setTimeout(function () { button.textContent = "Copy"; }, 2000); };
  if (navigator.clipboard && window.isSecureContext) {
    navigator.clipboard.writeText(text).then(done, function () { selectText(source); });
  } else {
    selectText(source);
    try { if (document.execCommand("copy")) done(); } catch (e) { /* the text stays selected for Ctrl+C */ }
  }
});
function selectText(element) {
  var range = document.createRange();
  range.selectNodeContents(element);
  var selection = window.getSelection();
  selection.removeAllRanges();
  selection.addRange(range);
}
document.addEventListener("submit", function (event) {
  var message = event.target.getAttribute("data-confirm");
  if (message && !window.confirm(message)) event.preventDefault();
});
// Template editor: a variable button inserts its {{name}} where the cursor was in the last field it names.
var insertField = null;
document.addEventListener("focusin", function (event) {
  var target = event.target;
  var list = document.querySelector("[data-insert-fields]");
  if (list && target && target.id && list.getAttribute("data-insert-fields").split(" ").indexOf(target.id) !== -1) insertField = target;
});
document.addEventListener("click", function (event) {
  var button = event.target.closest && event.target.closest("[data-insert]");
  if (!button) return;
  var list = button.closest("[data-insert-fields]");
  var field = insertField || (list && document.getElementById(list.getAttribute("data-insert-fields").split(" ").pop()));
  if (!field) return;
  var text = button.getAttribute("data-insert");
  var start = field.selectionStart == null ? field.value.length : field.selectionStart;
  var end = field.selectionEnd == null ? start : field.selectionEnd;
  field.setRangeText(text, start, end, "end");
  field.focus();
});
(function () {
  // A region following running work (data-live-seconds): fetch the page again and swap the region for its new
  // version, until it comes back finished (without the attribute). Not while focus is inside it or the tab is hidden.
  var region = document.querySelector("[data-live-seconds]");
  if (!region || !window.fetch || !window.DOMParser) return;
  function later() {
    var seconds = Math.max(1, Number(region.getAttribute("data-live-seconds")) || 2);
    setTimeout(poll, seconds * 1000);
  }
  function poll() {
    if (document.visibilityState !== "visible" || region.contains(document.activeElement)) { later(); return; }
    fetch(window.location.href, { credentials: "same-origin", headers: { accept: "text/html" } })
      .then(function (response) { if (!response.ok) throw new Error("status " + response.status); return response.text(); })
      .then(function (text) {
        var fresh = new DOMParser().parseFromString(text, "text/html").getElementById(region.id);
        if (!fresh) return;
        region.replaceWith(fresh);
        region = fresh;
        if (region.hasAttribute("data-live-seconds")) later();
      })
      .catch(later);
  }
  later();
})();
`;

export interface Asset {
  path: string;
  body: string;
  contentType: string;
}

function asset(name: string, extension: string, body: string, contentType: string): Asset {
  const hash = createHash('sha256').update(body).digest('hex').slice(0, 12);
  return { path: `/assets/${name}.${hash}.${extension}`, body, contentType };
}

export const STYLESHEET = asset('dashboard', 'css', CSS, 'text/css; charset=utf-8');
export const SCRIPT = asset('dashboard', 'js', JS, 'text/javascript; charset=utf-8');
export const ASSETS = [STYLESHEET, SCRIPT];
