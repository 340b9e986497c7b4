import type { FastifyInstance } from 'fastify';
import Ajv from 'ajv';
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
  const jsonBody = addFormats.default(new Ajv.default({ ...common, coerceTypes: false }));
  app.setValidatorCompiler(({ schema, httpPart }) =>
    (httpPart === 'body' ? jsonBody : textParts).compile(schema),
  );

  app.addHook('onRequest', async (request) => {
    // A NUL reaches a query string only percent-encoded (Node refuses the raw byte in a request line).
    if (!request.url.includes('%00')) return;
    const at = pathOfNul(request.query, '/querystring');
    if (at !== undefined) throw invalidField(at, NUL_MESSAGE);
  });
}
