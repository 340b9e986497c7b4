import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { AppError } from '../errors.js';
import type { Metrics } from '../infra/metrics.js';

/** Requests no route matched share one label: the raw URL would make a series per address tried. */
const UNMATCHED = 'unmatched';

/**
 * Counts and times every answer by its route template (registered first, so every route and the 404 handler
 * inherit the hook). Only registered when METRICS=on.
 */
export function registerRequestMetrics(app: FastifyInstance, metrics: Metrics): void {
  app.addHook('onResponse', (request, reply, done) => {
    const route = request.is404 ? UNMATCHED : (request.routeOptions.url ?? UNMATCHED);
    metrics.request(request.method, route, reply.statusCode, reply.elapsedTime / 1000);
    done();
  });
}

const digest = (text: string) => createHash('sha256').update(text).digest();

/** GET /metrics in the Prometheus text format; with a token, only for `Authorization: Bearer TOKEN` (401 otherwise). */
export function registerMetricsRoute(app: FastifyInstance, metrics: Metrics, token: string | undefined): void {
  const expected = token === undefined ? undefined : digest(token);
  app.get('/metrics', { schema: { hide: true } }, async (request, reply) => {
    if (expected) {
      const match = /^Bearer\s+(\S+)\s*$/i.exec(request.headers.authorization ?? '');
      // Digests have one length, so the comparison takes the same time whatever was sent.
      if (!match || !timingSafeEqual(digest(match[1]!), expected)) {
        reply.header('www-authenticate', 'Bearer realm="metrics"');
        throw new AppError('unauthorized', 'GET /metrics needs Authorization: Bearer with the METRICS_TOKEN');
      }
    }
    reply.header('cache-control', 'no-store').type(metrics.registry.contentType);
    return metrics.registry.metrics();
  });
}
