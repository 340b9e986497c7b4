import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../errors.js';
import { STATUS_OF, asUnavailable } from '../http/errors.js';
import { html } from './html.js';
import { page } from './layout.js';
import { sendHtml } from './render.js';

/** A state-changing request without a valid CSRF token, or from another origin. */
export class CsrfRefused extends Error {
  constructor() {
    super('The form could not be accepted');
  }
}

const TITLES: Record<number, string> = {
  400: 'The request is not valid',
  401: 'Please sign in',
  403: 'Not allowed',
  404: 'Page not found',
  409: 'Conflict',
  413: 'Too much data',
  415: 'Not a form',
  429: 'Too many requests',
  500: 'Something went wrong',
  502: 'A service we rely on failed',
  503: 'Try again in a moment',
};

export function errorPage(request: FastifyRequest, reply: FastifyReply, status: number, message: string) {
  const state = request.dashboard;
  const title = TITLES[status] ?? 'Error';
  return sendHtml(
    reply,
    status,
    page({
      title,
      csrf: state?.csrf ?? '',
      viewer: state?.viewer ?? null,
      body: html`<h1>${title}</h1>
<p class="alert" role="alert">${message}</p>
<p><a href="${state?.viewer ? '/publications' : '/sign-in'}">Back to the dashboard</a></p>`,
    }),
  );
}

/**
 * The dashboard's errors are pages, not JSON: the same codes the API uses become the same statuses, with the
 * service's message on a page of the layout. Only the dashboard's own routes get this handler.
 */
export function registerDashboardErrors(app: FastifyInstance): void {
  app.setErrorHandler((caught: FastifyError | AppError | CsrfRefused, request, reply) => {
    const error: typeof caught = asUnavailable(caught, request.log) ?? caught;
    if (error instanceof CsrfRefused) {
      return errorPage(
        request,
        reply,
        403,
        'This form could not be accepted: it did not come from this site, or it is too old. Go back, reload the page and send it again.',
      );
    }
    if (error instanceof AppError) {
      if (error.code === 'unauthorized') return reply.redirect('/sign-in', 303);
      if (error.retryAfterSeconds !== undefined) reply.header('retry-after', String(error.retryAfterSeconds));
      return errorPage(request, reply, STATUS_OF[error.code], error.message);
    }
    if (error.validation) {
      // A malformed address (an app id or an id that cannot exist) names no page.
      if (error.validationContext === 'params') return errorPage(request, reply, 404, 'There is no such page.');
      return errorPage(request, reply, 400, 'The request is not valid.');
    }
    const status = error.statusCode ?? 500;
    if (status === 415) return errorPage(request, reply, 415, 'Send forms as application/x-www-form-urlencoded, as the pages do.');
    if (status === 413) return errorPage(request, reply, 413, 'The form holds more data than the dashboard accepts.');
    if (status >= 400 && status < 500) return errorPage(request, reply, status, 'The request is not valid.');
    request.log.error({ err: error }, 'dashboard request failed');
    return errorPage(request, reply, 500, `Something went wrong on our side. Quote this request id when reporting it: ${request.id}`);
  });
}
