import type { FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';
import type { Storage } from '../db/connection.js';

const Health = Type.Object({ status: Type.String() });

export function registerHealthRoutes(app: FastifyInstance, storage: Storage): void {
  app.get('/healthz', { schema: { tags: ['Health'], summary: 'The process is up', response: { 200: Health } } }, async () => ({ status: 'ok' }));
  app.get(
    '/readyz',
    {
      schema: {
        tags: ['Health'],
        summary: 'The database answers',
        response: { 200: Health, 503: Health },
      },
    },
    async (_request, reply) => ((await storage.ping()) ? { status: 'ready' } : reply.code(503).send({ status: 'database unreachable' })),
  );
}
