import type { FastifyInstance } from 'fastify';
import Ajv, { _, type KeywordCxt, type KeywordDefinition, str } from 'ajv';
import addFormats from 'ajv-formats';
import { invalidField } from '../errors.js';
import { NUL_MESSAGE, pathOfNul } from './nul.js';

/**
 * Two validators: query strings and path parameters arrive as text, so numbers and booleans are coerced there;
 * JSON bodies are typed already, so a body field of the wrong type is a 400, never silently converted.
 *
 * And one rule for every query string, of every route (the APIs' and the dashboard's, with a schema or without):
 * no NUL character in a name or a value, a 400 naming the parameter, as for JSON bodies (PostgreSQL text cannot
 * hold one; SQLite would store what PostgreSQL refuses).
 */
export function registerValidation(app: FastifyInstance): void {
  const common = { useDefaults: true, allErrors: true, strict: false } as const;
  const textParts = addFormats.default(new Ajv.default({ ...common, coerceTypes: 'array', removeAdditional: true }));
  const jsonBody = withFastStringLengths(addFormats.default(new Ajv.default({ ...common, coerceTypes: false })));
  app.setValidatorCompiler(({ schema, httpPart }) => (httpPart === 'body' ? jsonBody : textParts).compile(schema));

  app.addHook('onRequest', async (request) => {
    // A NUL reaches a query string only percent-encoded (Node refuses the raw byte in a request line).
    if (!request.url.includes('%00')) return;
    const at = pathOfNul(request.query, '/querystring');
    if (at !== undefined) throw invalidField(at, NUL_MESSAGE);
  });
}

/**
 * maxLength and minLength with ajv's meaning (a character is a code point: an emoji counts one), messages and params,
 * without walking every string: ajv's own keyword counts the characters of each one (ucs2length), ~100 ms on the
 * event loop for the 30 MB of a large FlexPDF import. A string has at most as many code points as UTF-16 units and at
 * least half as many, so its `.length` settles almost every case at once; only a string whose length falls between
 * the two bounds (longer than maxLength, or shorter than twice minLength) is counted. (ajv's `unicode: false` would
 * count UTF-16 units instead: a stricter limit for emoji, and a deprecated option.)
 */
function withFastStringLengths(ajv: Ajv.default): Ajv.default {
  ajv.removeKeyword('maxLength');
  ajv.removeKeyword('minLength');
  return ajv.addKeyword(lengthKeyword('maxLength')).addKeyword(lengthKeyword('minLength'));
}

function lengthKeyword(keyword: 'maxLength' | 'minLength'): KeywordDefinition {
  return {
    keyword,
    type: 'string',
    schemaType: 'number',
    error: {
      message: ({ schemaCode }) => str`must NOT have ${keyword === 'maxLength' ? 'more' : 'fewer'} than ${schemaCode} characters`,
      params: ({ schemaCode }) => _`{limit: ${schemaCode}}`,
    },
    code(cxt: KeywordCxt) {
      const { data, schemaCode, gen } = cxt;
      const count = gen.scopeValue('func', { ref: codePoints });
      cxt.fail(
        keyword === 'maxLength'
          ? _`${data}.length > ${schemaCode} && ${count}(${data}) > ${schemaCode}`
          : _`${data}.length < ${schemaCode} || (${data}.length < 2 * ${schemaCode} && ${count}(${data}) < ${schemaCode})`,
      );
    },
  };
}

/** Code points of a string, a surrogate pair counting one (as ajv's ucs2length; a lone surrogate counts one too). */
function codePoints(text: string): number {
  let pairs = 0;
  for (let index = 0; index < text.length - 1; index += 1) {
    const unit = text.charCodeAt(index);
    if (unit >= 0xd800 && unit <= 0xdbff && (text.charCodeAt(index + 1) & 0xfc00) === 0xdc00) {
      pairs += 1;
      index += 1;
    }
  }
  return text.length - pairs;
}
