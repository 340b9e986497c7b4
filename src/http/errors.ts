import type { FastifyError, FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';
import { isDatabaseUnavailable } from '../db/unavailable.js';
import { AppError, type ErrorCode, type FieldProblem } from '../errors.js';

/** The HTTP status of each error code (the dashboard's error pages use it too). */
export const STATUS_OF: Record<ErrorCode, number> = {
  validation_failed: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  request_timeout: 408,
  payload_too_large: 413,
  headers_too_large: 431,
  unsupported_media_type: 415,
  rate_limited: 429,
  quota_exceeded: 429,
  generation_failed: 502,
  unavailable: 503,
  internal: 500,
};

/** The code of a status Fastify itself raised: the first code listed with that status (429 is rate_limited). */
const CODE_OF_STATUS: Record<number, ErrorCode> = Object.fromEntries(
  Object.entries(STATUS_OF)
    .reverse()
    .map(([code, status]) => [status, code as ErrorCode]),
);

/** The one error body of both APIs (OpenAPI). */
export const ErrorBody = Type.Object(
  {
    success: Type.Literal(false),
    status: Type.Literal('error'),
    error: Type.String({ description: 'stable machine code, e.g. not_found' }),
    message: Type.String(),
    details: Type.Optional(Type.Array(Type.Object({ path: Type.String(), message: Type.String() }))),
    request_id: Type.Optional(Type.String()),
  },
  { $id: 'ErrorBody', description: 'The error shape of every failure' },
);

export function errorBody(code: ErrorCode, message: string, details: FieldProblem[] = []) {
  return { success: false as const, status: 'error' as const, error: code, message, details };
}

interface AjvProblem {
  instancePath: string;
  message?: string;
  keyword: string;
  params: Record<string, unknown>;
}

/**
 * A fixed choice written as a union of literals (unlock_type, order_by, status) fails in ajv as one "must be equal
 * to constant" per choice and a "must match a schema in anyOf": one problem listing the allowed values instead.
 */
function collapseChoices(problems: AjvProblem[]): AjvProblem[] {
  const choices = new Map<string, unknown[]>();
  for (const problem of problems) {
    if (problem.keyword === 'const') choices.set(problem.instancePath, [...(choices.get(problem.instancePath) ?? []), problem.params.allowedValue]);
  }
  const isChoice = (path: string) => choices.has(path) && problems.some((problem) => problem.keyword === 'anyOf' && problem.instancePath === path);
  return problems.flatMap((problem) => {
    if (!isChoice(problem.instancePath)) return [problem];
    if (problem.keyword !== 'anyOf') return [];
    const nullable = problems.some(
      (other) => other.instancePath === problem.instancePath && other.keyword === 'type' && other.params.type === 'null',
    );
    const allowed = [...new Set(choices.get(problem.instancePath))];
    return [{ ...problem, keyword: 'enum', params: { allowedValues: nullable ? [...allowed, null] : allowed } }];
  });
}

/** Turns ajv's problems into our field problems: `/title` must be string, `/articles/3/title` is required... */
function fieldProblems(context: string | undefined, problems: AjvProblem[]): FieldProblem[] {
  return collapseChoices(problems).map((problem) => {
    let path = problem.instancePath;
    if (problem.keyword === 'required') path += `/${String(problem.params.missingProperty)}`;
    const message =
      problem.keyword === 'required'
        ? 'is required'
        : problem.keyword === 'enum'
          ? `must be one of ${(problem.params.allowedValues as unknown[]).map(String).join(', ')}`
          : (problem.message ?? 'is invalid');
    const prefix = context && context !== 'body' ? `/${context}` : '';
    return { path: `${prefix}${path}` || '/', message };
  });
}

function describe(problem: FieldProblem): string {
  const where = problem.path === '/' ? 'the body' : problem.path.slice(1).replaceAll('/', '.');
  return `${where} ${problem.message}`;
}

/** How soon a client may retry when the database could not be reached. */
const UNAVAILABLE_RETRY_AFTER_SECONDS = 2;

/**
 * A database that cannot be reached just now (a dropped connection, a restart, a failover) fails the request with a
 * retryable 503 rather than a 500; the pool has already discarded the broken connection. Both error handlers use it.
 */
export function asUnavailable(error: unknown, log: { warn(details: object, message: string): void }): AppError | undefined {
  if (!isDatabaseUnavailable(error)) return undefined;
  log.warn({ err: error }, 'database unavailable');
  return new AppError('unavailable', 'The database cannot be reached just now; retry in a few seconds', [], UNAVAILABLE_RETRY_AFTER_SECONDS);
}

export function registerErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((caught: FastifyError | AppError, request, reply) => {
    const error: typeof caught = asUnavailable(caught, request.log) ?? caught;
    if (error instanceof AppError) {
      if (error.retryAfterSeconds !== undefined) reply.header('retry-after', String(error.retryAfterSeconds));
      return reply.code(STATUS_OF[error.code]).send(errorBody(error.code, error.message, error.details));
    }
    if (error.validation) {
      const details = fieldProblems(error.validationContext, error.validation as AjvProblem[]);
      const problem = details[0];
      const message = problem ? describe(problem) : 'The request is invalid';
      return reply.code(400).send(errorBody('validation_failed', message, details));
    }
    if (isUniqueViolation(error)) {
      // Services check uniqueness first; this is the loser of a race between two equal writes.
      return reply.code(409).send(errorBody('conflict', 'A record with these values already exists'));
    }
    const status = error.statusCode ?? 500;
    if (status >= 400 && status < 500) {
      const code = CODE_OF_STATUS[status] ?? 'validation_failed';
      const message = clientErrorMessage(error);
      if (status === 429 && !reply.hasHeader('retry-after')) reply.header('retry-after', '60');
      return reply.code(status).send(errorBody(code, message));
    }
    request.log.error({ err: error }, 'request failed');
    return reply
      .code(500)
      .send({ ...errorBody('internal', 'Something went wrong on our side; quote the request id when reporting it'), request_id: request.id });
  });

  app.setNotFoundHandler((request, reply) => {
    reply.code(404).send(errorBody('not_found', `Route ${request.method} ${request.url.split('?')[0]} was not found`));
  });
}

function isUniqueViolation(error: { code?: string }): boolean {
  return error.code === 'SQLITE_CONSTRAINT_UNIQUE' || error.code === 'SQLITE_CONSTRAINT_PRIMARYKEY' || error.code === '23505';
}

function clientErrorMessage(error: FastifyError): string {
  switch (error.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return 'The request body is larger than this endpoint accepts';
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return 'Send the body as application/json';
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return 'The body is empty; send a JSON object';
    default:
      return error.message;
  }
}
