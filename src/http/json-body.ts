import type { FastifyInstance } from 'fastify';
import { AppError } from '../errors.js';

const MAX_DEPTH = 32;
const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * JSON bodies: strict UTF-8 (invalid bytes are a 400, not silently replaced), prototype poisoning refused by
 * Fastify's own parser, and nesting bounded so that a hostile body cannot make later code recurse without end.
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
