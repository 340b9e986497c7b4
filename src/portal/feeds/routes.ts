import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { principalOf } from '../../http/auth.js';
import { AppIdAndIdParams, errorResponses } from '../../http/schemas.js';
import { registerCollectionRoutes } from '../collection-routes.js';
import { RssFeed, RssFeedCreateBody, RssFeedUpdateBody, SyncResult } from './schemas.js';
import type { FeedService } from './service.js';

export function registerFeedRoutes(app: FastifyInstance, feeds: FeedService): void {
  registerCollectionRoutes(app, {
    path: 'rss_feeds',
    noun: 'RSS feed',
    service: feeds,
    record: RssFeed,
    createBody: RssFeedCreateBody,
    updateBody: RssFeedUpdateBody,
    present: (view) => view,
  });
  app.withTypeProvider<TypeBoxTypeProvider>().post(
    '/rss_feeds/:app_id/:id/synchronize',
    {
      schema: {
        tags: ['Rss_feeds'],
        summary: 'Import the entries of a feed as articles',
        description:
          'Fetches the feed (conditionally, with its stored ETag and Last-Modified) and imports new and changed entries in one transaction. ' +
          'A feed that cannot be fetched or read answers 200 with job_status failed and the reason in errors; nothing is imported then. ' +
          'A feed already being synchronized answers 409.',
        params: AppIdAndIdParams,
        response: { 200: Type.Ref(SyncResult), ...errorResponses(400, 401, 403, 404, 409) },
      },
    },
    async (request) => feeds.synchronize(principalOf(request), request.params.app_id, request.params.id),
  );
}
