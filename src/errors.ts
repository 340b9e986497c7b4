// Errors that services raise. They name what went wrong in the API's vocabulary (a stable code), not in HTTP's:
// the HTTP layer maps each code to its status.

export type ErrorCode =
  | 'validation_failed'
  | 'unauthorized'
  | 'forbidden'
  | 'not_found'
  | 'conflict'
  | 'request_timeout'
  | 'payload_too_large'
  | 'headers_too_large'
  | 'unsupported_media_type'
  | 'rate_limited'
  | 'quota_exceeded'
  | 'generation_failed'
  | 'unavailable'
  | 'internal';

export interface FieldProblem {
  path: string;
  message: string;
}

export class AppError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details: FieldProblem[] = [],
    /** For rate_limited: when the caller may try again (sent as Retry-After). */
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
  }
}

export function notFound(what: string): AppError {
  return new AppError('not_found', `${what} was not found`);
}

/** A 400 listing field problems; its message names the first one (`articles.3.title is required`). */
export function validationError(problems: FieldProblem[]): AppError {
  const first = problems[0]!;
  return new AppError('validation_failed', `${first.path.slice(1).replaceAll('/', '.')} ${first.message}`, problems);
}

export function invalidField(path: string, message: string): AppError {
  return validationError([{ path, message }]);
}

export function forbidden(message: string): AppError {
  return new AppError('forbidden', message);
}

export function conflict(message: string): AppError {
  return new AppError('conflict', message);
}
