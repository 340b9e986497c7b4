// The dashboard's only way to build HTML: a tagged template that escapes every interpolated value unless it is
// already SafeHtml (the result of another `html` template).

import { escapeHtml } from '../content/text.js';

export { escapeHtml };

export class SafeHtml {
  constructor(readonly value: string) {}

  toString(): string {
    return this.value;
  }
}

/** Anything a template may interpolate: text and numbers are escaped; null, undefined and false render nothing. */
export type HtmlValue = SafeHtml | string | number | boolean | null | undefined | readonly HtmlValue[];

function render(value: HtmlValue): string {
  if (value instanceof SafeHtml) return value.value;
  if (value === null || value === undefined || value === false) return '';
  if (Array.isArray(value)) return value.map(render).join('');
  return escapeHtml(String(value));
}

/** Attribute values must always be quoted in the template (`href="${url}"`): quotes are escaped, so they cannot end it. */
export function html(strings: TemplateStringsArray, ...values: HtmlValue[]): SafeHtml {
  let out = strings[0]!;
  for (let index = 0; index < values.length; index += 1) {
    out += render(values[index]!) + strings[index + 1]!;
  }
  return new SafeHtml(out);
}

/**
 * A URL fit for an href: http(s) URLs and local paths as they are, anything else (javascript:, data:, ...) as
 * undefined, so that a stored URL can never run script when clicked.
 */
export function linkUrl(url: string | null | undefined): string | undefined {
  if (!url) return undefined;
  const value = url.trim();
  if (/^https?:\/\//i.test(value)) return value;
  if (value.startsWith('/') && !value.startsWith('//') && !value.startsWith('/\\')) return value;
  return undefined;
}
