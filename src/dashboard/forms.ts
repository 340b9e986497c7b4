import type { FastifyRequest, FastifySchemaValidationError, preValidationAsyncHookHandler } from 'fastify';
import { AppError, invalidField } from '../errors.js';
import { NUL_MESSAGE, pathOfNul } from '../http/nul.js';
import type { FormErrors } from './layout.js';

/** A form body as @fastify/formbody parses it: a repeated field arrives as an array. */
export type FormBody = Record<string, string | string[] | undefined>;

declare module 'fastify' {
  interface FastifyRequest {
    /** The form as the browser sent it, once a route has turned its body into an API input (`formAsApiInput`). */
    form: FormBody | null;
  }
}

/**
 * Every dashboard form fits in this: the largest field is a template body (20 KB of UTF-8, up to three times that
 * once percent-encoded), then an article-sized feed description.
 */
export const FORM_BODY_LIMIT = 128 * 1024;

/** The form as sent (empty without a body). */
export function formBody(request: FastifyRequest): FormBody {
  if (request.form) return request.form;
  const body = request.body;
  return body !== null && typeof body === 'object' ? (body as FormBody) : {};
}

/**
 * A route whose form is an API's input in other words (`schema.body` is that API's schema, with
 * `attachValidation`): this hook turns the form into the input before Fastify validates the body, so that the
 * dashboard takes exactly what the API takes, and the handler finds the problems with `bodyProblems`. The form as
 * sent stays in `request.form`, for the CSRF check and for showing the form again.
 */
export function formAsApiInput(toInput: (form: FormBody) => unknown): preValidationAsyncHookHandler {
  return async (request) => {
    request.form = formBody(request);
    request.body = toInput(request.form);
  };
}

/**
 * Every dashboard form, before its page sees it: a NUL character in any field (name or value) is a 400 naming the
 * field, as in the APIs' JSON bodies and query strings (PostgreSQL cannot store one; SQLite would store what
 * PostgreSQL refuses). `checkedByPage` are the fields whose page shows control characters at the field itself.
 */
export function refuseNulFields(body: FormBody, checkedByPage: readonly string[] = []): void {
  for (const [name, value] of Object.entries(body)) {
    if (checkedByPage.includes(name)) continue;
    const at = pathOfNul({ [name]: value }, '');
    if (at !== undefined) throw invalidField(at, NUL_MESSAGE);
  }
}

/** One field's text (the first, when repeated); missing is empty. */
export function text(body: FormBody, name: string): string {
  const value = body[name];
  if (Array.isArray(value)) return value[0] ?? '';
  return value ?? '';
}

/** A checkbox: present means ticked. */
export function checked(body: FormBody, name: string): boolean {
  return body[name] !== undefined;
}

export function allValues(body: FormBody, name: string): string[] {
  const value = body[name];
  if (value === undefined) return [];
  return Array.isArray(value) ? value : [value];
}

/** Positive whole numbers among the values (ids from checkboxes); anything else is dropped. */
export function ids(values: string[]): number[] {
  return [...new Set(values.filter((value) => /^[1-9]\d{0,9}$/.test(value)).map(Number))].filter((id) => id <= 2_147_483_647);
}

/** One query string parameter's text; missing (or repeated) is undefined. */
export function queryText(request: FastifyRequest, name: string): string | undefined {
  const value = (request.query as Record<string, unknown> | undefined)?.[name];
  return typeof value === 'string' ? value : undefined;
}

/** A page number from a query string: 1 unless it is a sensible whole number. */
export function pageNumber(value: unknown): number {
  return typeof value === 'string' && /^[1-9]\d{0,5}$/.test(value) ? Number(value) : 1;
}

function sentence(message: string): string {
  return message.charAt(0).toUpperCase() + message.slice(1);
}

/**
 * The field problems a service reported, keyed by form field (the first segment of each path), for showing next
 * to the fields; undefined when the error is not about the input (it goes to the error page instead). A conflict
 * or a refused sign-in has no path: it is put on `conflictField`.
 */
export function problemsOf(error: unknown, conflictField = 'form'): FormErrors | undefined {
  if (!(error instanceof AppError)) return undefined;
  if (error.code === 'validation_failed') {
    const errors: FormErrors = {};
    for (const problem of error.details.length > 0 ? error.details : [{ path: '/form', message: error.message }]) {
      const name = problem.path.split('/')[1] || 'form';
      errors[name] ??= sentence(problem.message);
    }
    return errors;
  }
  if (error.code === 'conflict') return { [conflictField]: sentence(error.message) };
  return undefined;
}

const CONTROL_CHARACTERS = /[\u0000-\u001f\u007f]/;
const CONTROL_CHARACTERS_BUT_LINES = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/;

/**
 * Fields holding control characters (in `multiline` fields, other than tabs and line breaks): no name, address or
 * text needs them, and PostgreSQL cannot store a NUL, so they are refused at the field rather than failing later.
 */
export function controlCharacterProblems(values: Record<string, string>, multiline: readonly string[] = []): FormErrors {
  const errors: FormErrors = {};
  for (const [name, value] of Object.entries(values)) {
    const pattern = multiline.includes(name) ? CONTROL_CHARACTERS_BUT_LINES : CONTROL_CHARACTERS;
    if (pattern.test(value)) errors[name] = 'Must not contain control characters';
  }
  return errors;
}

function describe(problem: FastifySchemaValidationError): string {
  const params = problem.params as Record<string, unknown>;
  switch (problem.keyword) {
    case 'required':
      return 'Is required';
    case 'minLength':
      return params.limit === 1 ? 'Is required' : `Must be at least ${String(params.limit)} characters`;
    case 'maxLength':
      return `Must be at most ${String(params.limit)} characters`;
    case 'pattern':
      return params.pattern === '\\S' ? 'Is required' : 'Is not in the expected form';
    case 'maxItems':
      return `Must name at most ${String(params.limit)}`;
    case 'minItems':
      return params.limit === 1 ? 'Choose at least one' : `Choose at least ${String(params.limit)}`;
    default:
      return sentence(problem.message ?? 'is invalid');
  }
}

/** Schema problems keyed by form field (the first segment of each path), the first one of each field. */
function fieldProblems(problems: readonly FastifySchemaValidationError[]): FormErrors {
  const errors: FormErrors = {};
  for (const problem of problems) {
    let path = problem.instancePath;
    if (problem.keyword === 'required') path += `/${String((problem.params as { missingProperty: string }).missingProperty)}`;
    const name = path.split('/')[1] || 'form';
    errors[name] ??= describe(problem);
  }
  return errors;
}

/**
 * The problems Fastify found in the body of a route with `attachValidation` (see `formAsApiInput`), keyed by form
 * field; undefined when the body is valid. (The scope's own hook has already answered a malformed address.)
 */
export function bodyProblems(request: FastifyRequest): FormErrors | undefined {
  const error = request.validationError;
  if (!error || error.validationContext !== 'body') return undefined;
  return fieldProblems(error.validation as FastifySchemaValidationError[]);
}
