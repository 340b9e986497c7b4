import cookie from '@fastify/cookie';
import formbody from '@fastify/formbody';
import type { FastifyPluginAsync, FastifyReply } from 'fastify';
import { ASSETS } from './assets.js';
import { CSRF_FIELD, fromSameOrigin, tokenMatches } from './csrf.js';
import { CsrfRefused, errorPage, registerDashboardErrors } from './errors.js';
import { FORM_BODY_LIMIT, formBody, refuseNulFields, text } from './forms.js';
import type { DashboardOptions } from './options.js';
import { registerAuthPages } from './pages/auth.js';
import { registerClientPages } from './pages/clients.js';
import { registerFeedPages } from './pages/feeds.js';
import { registerLeadBatchPages } from './pages/lead-batches.js';
import { registerLeadPages } from './pages/leads.js';
import { registerPublicationPages } from './pages/publications.js';
import { registerSettingsPages } from './pages/settings.js';
import { registerTemplatePages } from './pages/templates.js';
import { registerWebhookPages } from './pages/webhooks.js';
import { resolveDashboardState } from './session.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** A static asset: no session lookup. */
    asset?: boolean;
    /** Fields whose page shows control characters (NUL included) at the field itself: no generic 400 for them. */
    controlCharactersAtFields?: readonly string[];
  }
}

// Pages load only what this server sends; nothing may frame them (clickjacking); no inline script can run even
// if some content escaped escaping.
const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
].join('; ');

function securityHeaders(reply: FastifyReply): void {
  reply.header('content-security-policy', CONTENT_SECURITY_POLICY);
  reply.header('x-frame-options', 'DENY');
  reply.header('x-content-type-options', 'nosniff');
  // Same-origin requests carry a Referer (the CSRF check's fallback); other sites never see dashboard URLs.
  reply.header('referrer-policy', 'same-origin');
}

/**
 * The web dashboard at `/`: server-rendered pages over the same services as the Portal API, so the role table
 * applies exactly as there. Registered as its own scope: form bodies, cookies, HTML error pages and the session
 * check exist here only, and the JSON API around it behaves as before.
 */
export const dashboardRoutes: FastifyPluginAsync<DashboardOptions> = async (app, options) => {
  // Forms only: the JSON parser inherited from the root does not apply to pages.
  app.removeAllContentTypeParsers();
  await app.register(formbody, { bodyLimit: FORM_BODY_LIMIT });
  await app.register(cookie);
  app.addHook('onRoute', (route) => {
    route.schema = { ...(route.schema ?? {}), hide: true };
  });
  registerDashboardErrors(app);
  app.decorateRequest('dashboard', null as never);
  app.decorateRequest('form', null);

  app.addHook('onRequest', async (request, reply) => {
    securityHeaders(reply);
    if (request.routeOptions.config.asset) return;
    reply.header('cache-control', 'no-store');
    request.dashboard = await resolveDashboardState(options.accounts, request, reply);
    // Endpoints Masthead disabled are told to their owner on every page (until enabled again or deleted).
    const { principal, viewer } = request.dashboard;
    if (request.method === 'GET' && principal && viewer) viewer.disabledWebhooks = await options.webhooks.countDisabledByFailure(principal);
  });

  app.addHook('preHandler', async (request, reply) => {
    // Routes that show their form's problems themselves (attachValidation) still answer a malformed address with
    // the error page, before anything else, as every route does.
    const invalid = request.validationError;
    if (invalid && invalid.validationContext !== 'body') throw invalid;
    if (request.routeOptions.config.asset) return;
    const state = request.dashboard;
    if (!state.viewer && request.routeOptions.config.signedOut !== true) {
      const next = request.method === 'GET' ? `?next=${encodeURIComponent(request.url)}` : '';
      return reply.redirect(`/sign-in${next}`, 303);
    }
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      const token = text(formBody(request), CSRF_FIELD);
      if (!fromSameOrigin(request) || !state.csrfSecret || !tokenMatches(state.csrfSecret, token)) throw new CsrfRefused();
      refuseNulFields(formBody(request), request.routeOptions.config.controlCharactersAtFields);
    }
  });

  for (const asset of ASSETS) {
    app.get(asset.path, { config: { asset: true, signedOut: true } }, async (_request, reply) =>
      reply.header('cache-control', 'public, max-age=31536000, immutable').type(asset.contentType).send(asset.body),
    );
  }

  app.get('/', { config: { signedOut: true } }, async (request, reply) =>
    reply.redirect(request.dashboard.viewer ? '/publications' : '/sign-in', 303),
  );

  registerAuthPages(app, options);
  registerSettingsPages(app, options);
  registerPublicationPages(app, options);
  registerFeedPages(app, options);
  registerClientPages(app, options);
  registerTemplatePages(app, options);
  registerWebhookPages(app, options);
  await registerLeadPages(app, options);
  await registerLeadBatchPages(app, options);

  // Unknown addresses inside the dashboard's own sections are pages too (elsewhere the API's JSON 404 answers).
  for (const section of ['/publications/*', '/settings/*', '/templates/*', '/leads/*', '/webhooks/*']) {
    app.all(section, async (request, reply) => errorPage(request, reply, 404, 'There is no such page.'));
  }
};
