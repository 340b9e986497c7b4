import type { FastifyInstance } from 'fastify';
import Ajv from 'ajv';
import addFormats from 'ajv-formats';

/**
 * Two validators: query strings and path parameters arrive as text, so numbers and booleans are coerced there;
 * JSON bodies are typed already, so a body field of the wrong type is a 400, never silently converted.
 */
export function registerValidation(app: FastifyInstance): void {
  const common = { useDefaults: true, allErrors: true, strict: false } as const;
  const textParts = addFormats.default(new Ajv.default({ ...common, coerceTypes: 'array', removeAdditional: true }));
  const jsonBody = addFormats.default(new Ajv.default({ ...common, coerceTypes: false }));
  app.setValidatorCompiler(({ schema, httpPart }) =>
    (httpPart === 'body' ? jsonBody : textParts).compile(schema),
  );
}
