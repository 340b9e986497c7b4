import type { FastifyPluginAsync } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { AccountService } from '../accounts/service.js';
import { principalOf, requireApiKey } from '../http/auth.js';
import { type PlanRateLimitOptions, registerPlanRateLimit } from '../http/rate-limit.js';
import { errorResponses } from '../http/schemas.js';
import { JobDetail, JobParams, JobsPage, JobsQuery, LeadFailed, LeadQueued, LeadRejected, LeadSuccess, ProcessLeadBody, ProcessLeadHeaders } from './schemas.js';
import type { LeadService } from './service.js';

export interface LeadRouteOptions {
  accounts: AccountService;
  leads: LeadService;
  rateLimit: PlanRateLimitOptions;
}

const TAGS = ['Lead Email API'];

/**
 * The Lead Email Generation API, mounted under /api/client: x-api-key on every request, rate-limited per plan. The
 * caller is authenticated (401) and authorized (403: the account owner's keys only) before the rate limit counts, so
 * only requests the caller may make spend the account's requests a minute: a portal client's key, refused, spends
 * none of its owner's.
 */
export const leadRoutes: FastifyPluginAsync<LeadRouteOptions> = async (plugin, { accounts, leads, rateLimit }) => {
  plugin.addHook('onRequest', requireApiKey(accounts, { allowBearer: false }));
  plugin.addHook('onRequest', async (request) => leads.assertMayUse(principalOf(request)));
  await registerPlanRateLimit(plugin, rateLimit);
  const app = plugin.withTypeProvider<TypeBoxTypeProvider>();

  app.post(
    '/process-lead',
    {
      schema: {
        tags: TAGS,
        summary: 'Process a lead: business-email check, company research, a personalized email',
        description:
          'Every accepted request creates a job. A non-business address answers 200 with success false and businessEmail false ' +
          '(the job ends rejected). With `Prefer: respond-async` the answer is 202 at once and the job runs in the background. ' +
          'Replays with the same Idempotency-Key carry `Idempotent-Replayed: true`.',
        headers: ProcessLeadHeaders,
        body: ProcessLeadBody,
        response: {
          200: Type.Union([LeadSuccess, LeadRejected]),
          202: LeadQueued,
          ...errorResponses(400, 401, 403, 404, 409, 413, 415, 429),
          502: LeadFailed,
        },
      },
    },
    async (request, reply) => {
      const result = await leads.processLead(principalOf(request), request.body, {
        respondAsync: /(^|[\s,;])respond-async($|[\s,;])/i.test(request.headers.prefer ?? ''),
        idempotencyKey: request.headers['idempotency-key'],
      });
      if (result.statusCode === 202) {
        const { jobId } = result.body as { jobId: string };
        reply.header('preference-applied', 'respond-async').header('location', `/api/client/jobs/${jobId}`);
      }
      if (result.replayed) reply.header('idempotent-replayed', 'true');
      // The service built the body for this status (and an idempotent replay stored it); the schemas above describe each.
      return reply.code(result.statusCode as 200).send(result.body as never);
    },
  );

  app.get(
    '/jobs',
    {
      schema: {
        tags: TAGS,
        summary: "The account's jobs, newest first",
        querystring: JobsQuery,
        response: { 200: JobsPage, ...errorResponses(400, 401, 403, 429) },
      },
    },
    async (request) => leads.listJobs(principalOf(request), request.query),
  );

  app.get(
    '/jobs/:id',
    {
      schema: {
        tags: TAGS,
        summary: 'One job with its generated email and the company research it used',
        params: JobParams,
        response: { 200: JobDetail, ...errorResponses(400, 401, 403, 404, 429) },
      },
    },
    async (request) => leads.getJob(principalOf(request), request.params.id),
  );
};

