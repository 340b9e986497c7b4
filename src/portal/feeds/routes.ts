import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { principalOf } from '../../accounts/api-key-hook.js';
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
          'With `Prefer: respond-async` the synchronization is queued for the background scheduler instead: 202 with job_status pending and ' +
          "the job_id; the feed's job_status, job_id, last_error and imported_at tell the outcome. " +
          'A feed already being synchronized answers 409; a feed whose server answered 429 or 503 with Retry-After answers 429 ' +
          '(with Retry-After) until that time has passed.',
        params: AppIdAndIdParams,
        headers: Type.Object({ prefer: Type.Optional(Type.String({ description: 'respond-async: queue the run and answer 202 at once' })) }),
        response: { 200: Type.Ref(SyncResult), 202: Type.Ref(SyncResult), ...errorResponses(400, 401, 403, 404, 409, 429) },
      },
    },
    async (request, reply) => {
      const queue = prefersAsync(request.headers.prefer);
      const result = await feeds.synchronize(principalOf(request), request.params.app_id, request.params.id, { queue });
      // The feed itself tells how the queued run went (job_status, job_id, last_error, imported_at).
      if (queue)
        reply
          .code(202)
          .header('preference-applied', 'respond-async')
          .header('location', request.url.replace(/\/synchronize(?:\?.*)?$/, ''));
      return result;
    },
  );
}

/** Whether a Prefer header (RFC 7240) holds the respond-async preference. */
export function prefersAsync(prefer: string | string[] | undefined): boolean {
  const values = Array.isArray(prefer) ? prefer : prefer ? [prefer] : [];
  return values.some((value) => value.split(',').some((preference) => preference.split(';')[0]!.trim().toLowerCase() === 'respond-async'));
}
