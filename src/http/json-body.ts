import type { FastifyInstance } from 'fastify';
import { AppError, invalidField } from '../errors.js';

const MAX_DEPTH = 32;
const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * JSON bodies: strict UTF-8 (invalid bytes are a 400, not silently replaced), prototype poisoning refused by
 * Fastify's own parser, nesting bounded so that a hostile body cannot make later code recurse without end, and no
 * NUL character in any string (PostgreSQL text cannot hold one; SQLite would store what PostgreSQL refuses).
 */
export function registerJsonBodyParser(app: FastifyInstance): void {
  const parseJson = app.getDefaultJsonParser('error', 'error');
  // The APIs speak JSON only: any other media type is a 415.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
    let text: string;
    try {
      text = utf8.decode(body as Buffer);
    } catch {
      return done(new AppError('validation_failed', 'The body is not valid UTF-8'), undefined);
    }
    parseJson(request, text, (error, value) => {
      if (error) {
        const code = (error as { code?: string }).code;
        if (code === 'FST_ERR_CTP_EMPTY_JSON_BODY') return done(error, undefined);
        return done(new AppError('validation_failed', 'The body is not valid JSON'), undefined);
      }
      if (depthExceeds(value, MAX_DEPTH)) {
        return done(new AppError('validation_failed', `The body is nested deeper than ${MAX_DEPTH} levels`), undefined);
      }
      // A NUL can only arrive escaped (\u0000): look for it in the values only when the text holds the escape.
      const nulAt = text.includes('\\u0000') ? pathOfNul(value, '') : undefined;
      if (nulAt !== undefined) {
        return done(invalidField(nulAt || '/', 'must not contain the NUL character (\\u0000)'), undefined);
      }
      done(null, value);
    });
  });
}

function depthExceeds(value: unknown, remaining: number): boolean {
  if (value === null || typeof value !== 'object') return false;
  if (remaining === 0) return true;
  for (const child of Array.isArray(value) ? value : Object.values(value)) {
    if (depthExceeds(child, remaining - 1)) return true;
  }
  return false;
}

/** The JSON pointer of the first string (value or key) holding a NUL character, if any. */
function pathOfNul(value: unknown, path: string): string | undefined {
  if (typeof value === 'string') return value.includes('\0') ? path : undefined;
  if (value === null || typeof value !== 'object') return undefined;
  for (const [key, child] of Object.entries(value)) {
    const childPath = `${path}/${key}`;
    if (key.includes('\0')) return childPath;
    const found = pathOfNul(child, childPath);
    if (found !== undefined) return found;
  }
  return undefined;
}
