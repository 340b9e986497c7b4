import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { principalOf } from '../../http/auth.js';
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
import { type ArticleService, LIST_LIMIT } from './service.js';

const tags = ['Articles'];
const IMPORT_BODY_LIMIT = 32 * 1024 * 1024;

export const articleRoutes: FastifyPluginAsyncTypebox<{ articles: ArticleService }> = async (app, { articles }) => {
  app.get(
    '/articles/:app_id',
    {
      schema: {
        tags,
        summary: 'List the articles of a publication',
        description: `At most ${LIST_LIMIT} articles, in the order asked for; the header X-Total-Count tells how many match. Use the page endpoint to walk through more.`,
        params: AppIdParams,
        querystring: ArticleListQuery,
        response: { 200: Type.Array(Type.Ref(Article)), ...errorResponses(400, 401, 404) },
      },
    },
    async (request, reply) => {
      const result = await articles.list(principalOf(request), request.params.app_id, request.query);
      reply.header('x-total-count', String(result.total));
      return result.articles;
    },
  );

  app.get(
    '/articles/:app_id/page/:page',
    {
      schema: {
        tags,
        summary: 'A page of articles, optionally filtered by words of the title or description',
        params: Type.Object({ app_id: AppIdParams.properties.app_id, page: PageNumber }),
        querystring: ArticlePageQuery,
        response: { 200: ArticlePage, ...errorResponses(400, 401, 404) },
      },
    },
    async (request) => {
      const { records, total, perPage } = await articles.page(
        principalOf(request),
        request.params.app_id,
        request.params.page,
        request.query,
      );
      return pageEnvelope(records, total, request.params.page, perPage);
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

  app.post(
    '/articles/:app_id/flexpdf-import',
    {
      bodyLimit: IMPORT_BODY_LIMIT,
      schema: {
        tags,
        summary: `Create up to ${MAX_IMPORT} articles at once, all or none`,
        params: AppIdParams,
        body: FlexPdfImport,
        response: { 201: FlexPdfImportResult, ...errorResponses(400, 401, 403, 404, 413, 415) },
      },
    },
    async (request, reply) => {
      const created = await articles.importMany(principalOf(request), request.params.app_id, request.body.articles);
      return reply.code(201).send({ articles: created, count: created.length });
    },
  );
};
