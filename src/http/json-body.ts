import type { FastifyInstance, FastifyRequest } from 'fastify';
import secureJson from 'secure-json-parse';
import { AppError, type FieldProblem, invalidField } from '../errors.js';
import { NUL_MESSAGE, pathOfNul } from './nul.js';

const MAX_DEPTH = 32;
const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * JSON bodies: strict UTF-8 (invalid bytes are a 400, not silently replaced), prototype poisoning refused by
 * Fastify's own parser, nesting bounded so that a hostile body cannot make later code recurse without end, and no
 * NUL character in any string (PostgreSQL text cannot hold one; SQLite would store what PostgreSQL refuses).
 */
export function registerJsonBodyParser(app: FastifyInstance): void {
  const parser = jsonBodyParser(app);
  // The APIs speak JSON only: any other media type is a 415.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, parser);
}

export type JsonBodyParser = (request: FastifyRequest, body: Buffer, done: (error: Error | null, value?: unknown) => void) => void;

/** The parser of JSON bodies on the event loop (routes taking larger bodies parse those in a worker: parseJsonBytes). */
export function jsonBodyParser(app: FastifyInstance): JsonBodyParser {
  const parseJson = app.getDefaultJsonParser('error', 'error');
  return (request, body, done) => {
    let text: string;
    try {
      text = utf8.decode(body);
    } catch {
      return done(new AppError('validation_failed', 'The body is not valid UTF-8'), undefined);
    }
    parseJson(request, text, (error, value) => {
      if (error) {
        const code = (error as { code?: string }).code;
        if (code === 'FST_ERR_CTP_EMPTY_JSON_BODY') return done(error, undefined);
        return done(new AppError('validation_failed', 'The body is not valid JSON'), undefined);
      }
      const problem = checkJsonValue(text, value);
      if (problem) return done(problem, undefined);
      done(null, value);
    });
  };
}

/** Depth and NUL: the checks of every parsed body. */
function checkJsonValue(text: string, value: unknown): AppError | undefined {
  if (depthExceeds(value, MAX_DEPTH)) {
    return new AppError('validation_failed', `The body is nested deeper than ${MAX_DEPTH} levels`);
  }
  // A NUL can only arrive escaped (\u0000): look for it in the values only when the text holds the escape.
  const nulAt = text.includes('\\u0000') ? pathOfNul(value, '') : undefined;
  if (nulAt !== undefined) return invalidField(nulAt || '/', NUL_MESSAGE);
  return undefined;
}

/** A JSON body parsed, or the 400 it is (as plain data: it may cross from a worker thread). */
export type JsonParseOutcome = { value: unknown } | { error: { message: string; details: FieldProblem[] } };

/**
 * The same rules as the body parser (strict UTF-8, prototype poisoning refused, nesting and NUL), as a pure
 * function of the bytes, for a worker thread. `maxItems` refuses a top-level array field longer than its bound
 * before anything else looks at the items (the schema would, after validating each of them).
 */
export function parseJsonBytes(bytes: Uint8Array, maxItems: Record<string, number> = {}): JsonParseOutcome {
  const failed = (error: AppError) => ({ error: { message: error.message, details: error.details } });
  let text: string;
  try {
    text = utf8.decode(bytes);
  } catch {
    return failed(new AppError('validation_failed', 'The body is not valid UTF-8'));
  }
  let value: unknown;
  try {
    value = secureJson.parse(text, undefined, { protoAction: 'error', constructorAction: 'error' });
  } catch {
    return failed(new AppError('validation_failed', 'The body is not valid JSON'));
  }
  if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
    for (const [field, max] of Object.entries(maxItems)) {
      const items = (value as Record<string, unknown>)[field];
      if (Array.isArray(items) && items.length > max) return failed(invalidField(`/${field}`, `must NOT have more than ${max} items`));
    }
  }
  const problem = checkJsonValue(text, value);
  return problem ? failed(problem) : { value };
}

function depthExceeds(value: unknown, remaining: number): boolean {
  if (value === null || typeof value !== 'object') return false;
  if (remaining === 0) return true;
  for (const child of Array.isArray(value) ? value : Object.values(value)) {
    if (depthExceeds(child, remaining - 1)) return true;
  }
  return false;
}
