import type { FastifyPluginAsync } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { principalOf } from '../../accounts/api-key-hook.js';
import { errorResponses } from '../../http/schemas.js';
import type { IdempotencyStore } from '../idempotency/store.js';
import { BatchBody, BatchHeaders, Batch, BatchesPage, BatchPage, BatchParams, BatchResults, PageQuery, ResultsQuery } from './schemas.js';
import { resultsCsv } from './results-csv.js';
import type { LeadBatchService } from './service.js';

export interface LeadBatchRouteOptions {
  batches: LeadBatchService;
  idempotency: IdempotencyStore;
}

const TAGS = ['Lead Email API'];

/** Lists of leads (mounted inside the lead API's scope: its key check and rate limit apply). */
export const leadBatchRoutes: FastifyPluginAsync<LeadBatchRouteOptions> = async (plugin, { batches, idempotency }) => {
  const app = plugin.withTypeProvider<TypeBoxTypeProvider>();

  app.post(
    '/lead-batches',
    {
      schema: {
        tags: TAGS,
        summary: 'Queue a list of leads: each becomes a job, run in the background',
        description:
          'Each lead counts against the plan as one sent alone does. The batch is accepted as far as the monthly quota allows: ' +
          'the first leads that fit become jobs and the rest are listed in `not_accepted`; when none fits, the answer is 429 and ' +
          'nothing is stored. Addresses that fail the local checks (syntax, free-mail or disposable domain) end `rejected` at ' +
          'once; the mail-server look-up, when enabled, is each job’s first step.',
        headers: BatchHeaders,
        body: BatchBody,
        response: { 202: Batch, ...errorResponses(400, 401, 403, 404, 409, 413, 415, 429) },
      },
    },
    async (request, reply) => {
      const principal = principalOf(request);
      const submit = async () => ({ statusCode: 202, body: await batches.submit(principal, request.body) });
      const key = request.headers['idempotency-key'];
      const result =
        key === undefined
          ? { ...(await submit()), replayed: false }
          : await idempotency.respond(principal.accountId, key, { leadBatch: request.body }, submit);
      const { id } = result.body as { id: string };
      reply.header('location', `/api/client/lead-batches/${id}`);
      if (result.replayed) reply.header('idempotent-replayed', 'true');
      return reply.code(202).send(result.body as never);
    },
  );

  app.get(
    '/lead-batches',
    {
      schema: {
        tags: TAGS,
        summary: "The account's batches, newest first",
        querystring: PageQuery,
        response: { 200: BatchesPage, ...errorResponses(400, 401, 403, 429) },
      },
    },
    async (request) => batches.list(principalOf(request), request.query),
  );

  app.get(
    '/lead-batches/:id',
    {
      schema: {
        tags: TAGS,
        summary: 'A batch: counts by status, progress, and a page of its jobs (as the jobs listing pages them)',
        params: BatchParams,
        querystring: PageQuery,
        response: { 200: BatchPage, ...errorResponses(400, 401, 403, 404, 429) },
      },
    },
    async (request) => batches.jobs(principalOf(request), request.params.id, request.query),
  );

  app.get(
    '/lead-batches/:id/results.json',
    {
      schema: {
        tags: TAGS,
        summary: 'One line per lead sent, in list order: status, company, subject and body, or the error',
        params: BatchParams,
        response: { 200: BatchResults, ...errorResponses(400, 401, 403, 404, 429) },
      },
    },
    async (request) => batches.results(principalOf(request), request.params.id),
  );

  app.get(
    '/lead-batches/:id/results.csv',
    {
      schema: {
        tags: TAGS,
        summary: 'The results as CSV (RFC 4180, UTF-8; `bom=true` for spreadsheets; formula-like cells neutralized)',
        params: BatchParams,
        querystring: ResultsQuery,
        produces: ['text/csv'],
        response: { 200: { type: 'string', description: 'CSV with a header line' }, ...errorResponses(400, 401, 403, 404, 429) },
      },
    },
    async (request, reply) => {
      const { batch, results } = await batches.results(principalOf(request), request.params.id);
      return reply
        .type('text/csv; charset=utf-8; header=present')
        .header('content-disposition', `attachment; filename="lead-batch-${batch.id}.csv"`)
        .send(resultsCsv(results, { bom: request.query.bom ?? false }));
    },
  );
};
