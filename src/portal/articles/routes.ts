import type { Readable } from 'node:stream';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { principalOf } from '../../accounts/api-key-hook.js';
import { jsonBodyParser } from '../../http/json-body.js';
import { type JsonPart, jsonArrayStream, jsonObjectStream } from '../../http/json-stream.js';
import { AppError } from '../../errors.js';
import { ownMemory } from '../../workers/pool.js';
import { AppIdAndIdParams, AppIdParams, NoContent, PageNumber, errorResponses, pageEnvelope } from '../../http/schemas.js';
import {
  Article,
  ArticleCreate,
  ArticleListQuery,
  ArticlePage,
  ArticlePageQuery,
  ArticleUpdate,
  FlexPdfImport,
  FlexPdfImportResult,
  MAX_IMPORT,
} from './schemas.js';
import { allRecords, type ArticleRecords, type ArticleService, LIST_LIMIT, LIST_MAX_BYTES } from './service.js';

const tags = ['Articles'];
const IMPORT_BODY_LIMIT = 32 * 1024 * 1024;
/** Import bodies from this size on are parsed in a worker thread (JSON.parse of 32 MiB holds a thread ~0.5 s). */
const PARSE_IN_WORKER_BYTES = 512 * 1024;
/**
 * Answers holding at least this many bytes of articles (HTML, descriptions, assets) are streamed, a slice of articles
 * serialized at a time, so that no tick serializes tens of MB; smaller ones are serialized at once, with a length.
 */
const STREAM_FROM_BYTES = 1024 * 1024;
const JSON_TYPE = 'application/json; charset=utf-8';
const STREAMED = `An answer holding ${STREAM_FROM_BYTES / 1024 / 1024} MiB of articles or more is sent as it is read (chunked, without Content-Length): the same JSON.`;

/** The records in full when small, else undefined: the caller streams them. */
async function smallRecords(records: ArticleRecords) {
  return records.bytes < STREAM_FROM_BYTES ? allRecords(records) : undefined;
}

/** A streamed JSON answer: the response schema's serializer does not apply to a stream; the items match it already. */
function sendStream<R extends { type(contentType: string): R; send(payload?: unknown): R }>(reply: R, stream: Readable): R {
  return reply.type(JSON_TYPE).send(stream);
}

/** A JSON object with these fields in this order, the articles (one of them) streamed a slice at a time. */
function streamedObject(fields: Record<string, unknown>, recordsField: string, records: ArticleRecords) {
  const parts = Object.entries(fields).map(([name, value]): [string, JsonPart] =>
    name === recordsField ? [name, { slices: records.slices }] : [name, { value }],
  );
  return jsonObjectStream(parts);
}

export const articleRoutes: FastifyPluginAsyncTypebox<{ articles: ArticleService }> = async (app, { articles }) => {
  app.get(
    '/articles/:app_id',
    {
      schema: {
        tags,
        summary: 'List the articles of a publication',
        description: `At most ${LIST_LIMIT} articles, and at most ${LIST_MAX_BYTES / 1024 / 1024} MiB of them (HTML, description and assets; at least one article), in the order asked for; the header X-Total-Count tells how many match. A list cut short names the rest in a \`Link: <...?offset=N>; rel="next"\` header. Use the page endpoint to walk through more. ${STREAMED}`,
        params: AppIdParams,
        querystring: ArticleListQuery,
        response: { 200: Type.Array(Type.Ref(Article)), ...errorResponses(400, 401, 404) },
      },
    },
    async (request, reply) => {
      const result = await articles.list(principalOf(request), request.params.app_id, request.query);
      reply.header('x-total-count', String(result.total));
      if (result.nextOffset !== undefined) {
        const next = new URL(request.url, 'http://localhost');
        next.searchParams.set('offset', String(result.nextOffset));
        reply.header('link', `<${next.pathname}${next.search}>; rel="next"`);
      }
      const small = await smallRecords(result.articles);
      if (small) return small;
      return sendStream(reply, jsonArrayStream(result.articles.slices));
    },
  );

  app.get(
    '/articles/:app_id/page/:page',
    {
      schema: {
        tags,
        summary: 'A page of articles, optionally filtered by words of the title or description',
        description: `per_page articles (the last page fewer), however large they are. ${STREAMED}`,
        params: Type.Object({ app_id: AppIdParams.properties.app_id, page: PageNumber }),
        querystring: ArticlePageQuery,
        response: { 200: ArticlePage, ...errorResponses(400, 401, 404) },
      },
    },
    async (request, reply) => {
      const { records, total, perPage } = await articles.pageRecords(principalOf(request), request.params.app_id, request.params.page, request.query);
      const small = await smallRecords(records);
      if (small) return pageEnvelope(small, total, request.params.page, perPage);
      return sendStream(reply, streamedObject(pageEnvelope([], total, request.params.page, perPage), 'records', records));
    },
  );

  app.get(
    '/articles/:app_id/:id',
    {
      schema: {
        tags,
        summary: 'One article',
        params: AppIdAndIdParams,
        response: { 200: Type.Ref(Article), ...errorResponses(400, 401, 404) },
      },
    },
    (request) => articles.get(principalOf(request), request.params.app_id, request.params.id),
  );

  app.post(
    '/articles/:app_id',
    {
      schema: {
        tags,
        summary: 'Create an article',
        params: AppIdParams,
        body: ArticleCreate,
        response: { 201: Type.Ref(Article), ...errorResponses(400, 401, 403, 404, 413, 415) },
      },
    },
    async (request, reply) => {
      const article = await articles.create(principalOf(request), request.params.app_id, request.body);
      return reply.code(201).send(article);
    },
  );

  app.put(
    '/articles/:app_id/:id',
    {
      schema: {
        tags,
        summary: 'Update an article',
        description: 'Only the fields sent change; null clears a nullable field.',
        params: AppIdAndIdParams,
        body: ArticleUpdate,
        response: { 200: Type.Ref(Article), ...errorResponses(400, 401, 403, 404, 413, 415) },
      },
    },
    (request) => articles.update(principalOf(request), request.params.app_id, request.params.id, request.body),
  );

  app.delete(
    '/articles/:app_id/:id',
    {
      schema: {
        tags,
        summary: 'Delete an article',
        params: AppIdAndIdParams,
        response: { 204: NoContent, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request, reply) => {
      await articles.remove(principalOf(request), request.params.app_id, request.params.id);
      return reply.code(204).send(null);
    },
  );

  // The import takes bodies of up to 32 MiB: who may import is checked before the body is read, and a large body is
  // parsed in a worker thread (with its item count checked there, before the schema looks at each item).
  await app.register(async (scope) => {
    const parseOnLoop = jsonBodyParser(scope);
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
      const bytes = body as Buffer;
      if (bytes.length < PARSE_IN_WORKER_BYTES || !scope.hasDecorator('workers')) return parseOnLoop(request, bytes, done);
      // The body's memory moves to the worker (it is not used here again) rather than being copied.
      scope.workers.run('parseJson', { bytes, maxItems: { articles: MAX_IMPORT } }, ownMemory(bytes)).then(
        (outcome) => {
          if ('value' in outcome) return done(null, outcome.value);
          done(new AppError('validation_failed', outcome.error.message, outcome.error.details), undefined);
        },
        (error: unknown) => done(error as Error, undefined),
      );
    });
    registerImportRoute(scope, articles);
  });
};

function registerImportRoute(app: Parameters<FastifyPluginAsyncTypebox>[0], articles: ArticleService): void {
  app.post(
    '/articles/:app_id/flexpdf-import',
    {
      bodyLimit: IMPORT_BODY_LIMIT,
      // Runs after the portal's key check, before the body is read: a viewer's 32 MiB is never parsed.
      onRequest: async (request) => articles.assertMayCreate(principalOf(request), (request.params as { app_id: string }).app_id),
      schema: {
        tags,
        summary: `Create up to ${MAX_IMPORT} articles at once, all or none`,
        description: `Each entry takes the fields of an article's creation, with the same rules (a category or issue of another publication is a 400 naming the entry). ${STREAMED}`,
        params: AppIdParams,
        body: FlexPdfImport,
        response: { 201: FlexPdfImportResult, ...errorResponses(400, 401, 403, 404, 413, 415) },
      },
    },
    async (request, reply) => {
      const created = await articles.importMany(principalOf(request), request.params.app_id, request.body.articles);
      reply.code(201);
      const small = await smallRecords(created);
      if (small) return reply.send({ articles: small, count: small.length });
      return sendStream(reply, streamedObject({ articles: [], count: created.count }, 'articles', created));
    },
  );
}
