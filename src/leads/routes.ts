import type { FastifyPluginAsync } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { AccountService } from '../accounts/service.js';
import { principalOf, requireApiKey } from '../accounts/api-key-hook.js';
import { type PlanRateLimitOptions, registerPlanRateLimit } from './rate-limit.js';
import { errorResponses } from '../http/schemas.js';
import type { IdempotencyStore, StoredResponse } from './idempotency/store.js';
import {
  JobDetail,
  JobParams,
  JobsPage,
  JobsQuery,
  LeadFailed,
  LeadQueued,
  LeadRejected,
  LeadSuccess,
  ProcessLeadBody,
  ProcessLeadHeaders,
} from './schemas.js';
import { type LeadOutcome, type LeadService, normalizedLead } from './service.js';
import { leadBatchRoutes } from './batches/routes.js';
import type { LeadBatchService } from './batches/service.js';

export interface LeadRouteOptions {
  accounts: AccountService;
  leads: LeadService;
  batches: LeadBatchService;
  idempotency: IdempotencyStore;
  rateLimit: PlanRateLimitOptions;
}

const TAGS = ['Lead Email API'];

/**
 * The Lead Email Generation API, mounted under /api/client: x-api-key on every request, rate-limited per plan. The
 * caller is authenticated (401) and authorized (403: the account owner's keys only) before the rate limit counts, so
 * only requests the caller may make spend the account's requests a minute: a portal client's key, refused, spends
 * none of its owner's.
 */
export const leadRoutes: FastifyPluginAsync<LeadRouteOptions> = async (plugin, { accounts, leads, batches, idempotency, rateLimit }) => {
  plugin.addHook('onRequest', requireApiKey(accounts, { allowBearer: false }));
  plugin.addHook('onRequest', async (request) => leads.assertMayUse(principalOf(request)));
  await registerPlanRateLimit(plugin, rateLimit);
  const app = plugin.withTypeProvider<TypeBoxTypeProvider>();
  await app.register(leadBatchRoutes, { batches, idempotency });

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
      const principal = principalOf(request);
      const lead = normalizedLead(request.body);
      const respondAsync = /(^|[\s,;])respond-async($|[\s,;])/i.test(request.headers.prefer ?? '');
      const respond = async () => leadResponse(await leads.processLead(principal, lead, { respondAsync }));
      const key = request.headers['idempotency-key'];
      // Whether the answer is the email (200) or a job to follow (202) is part of the request: the same key with the
      // other choice is another request (409), never a replay of an answer of the other kind. (sendTo, the
      // dashboard's, is never set here; it stays in the request so that keys hash as they always did.)
      const result =
        key === undefined
          ? { ...(await respond()), replayed: false }
          : await idempotency.respond(principal.accountId, key, { ...lead, sendTo: null, respondAsync }, respond);
      if (result.statusCode === 202) {
        const { jobId } = result.body as { jobId: string };
        reply.header('preference-applied', 'respond-async').header('location', `/api/client/jobs/${jobId}`);
      }
      if (result.replayed) reply.header('idempotent-replayed', 'true');
      // leadResponse built the body for this status (and an idempotent replay stored it); the schemas above describe each.
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

/** The API's answer to a lead's outcome: what the route sends, and what an Idempotency-Key keeps for its replays. */
function leadResponse(outcome: LeadOutcome): StoredResponse {
  switch (outcome.kind) {
    case 'completed':
      return {
        statusCode: 200,
        body: {
          success: true,
          jobId: outcome.jobId,
          emailSubject: outcome.subject,
          emailBody: outcome.body,
          emailDraft: `${outcome.subject}\n\n${outcome.body}`,
          message: outcome.sentTo ? `Email generated and sent to ${outcome.sentTo}` : 'Email generated',
        },
      };
    case 'queued':
      return { statusCode: 202, body: { success: true, jobId: outcome.jobId, status: 'pending' } };
    case 'rejected':
      return {
        statusCode: 200,
        body: { success: false, error: outcome.message, businessEmail: false, reason: outcome.reason, jobId: outcome.jobId },
      };
    case 'generation_failed':
      return {
        statusCode: 502,
        body: { success: false, status: 'error', error: 'generation_failed', message: outcome.message, details: [], jobId: outcome.jobId },
      };
  }
}
