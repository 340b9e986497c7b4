import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { principalOf } from '../../accounts/api-key-hook.js';
import { Nullable, PageEnvelope, PerPage, errorResponses, pageEnvelope } from '../../http/schemas.js';
import type { AuditService } from './service.js';

const AuditEntry = Type.Object({
  id: Type.Integer(),
  action: Type.String({ description: 'client.create, client.update, client.delete, client.roles or client.become' }),
  actor_id: Nullable(Type.Integer({ description: 'the user who acted' })),
  impersonator_id: Nullable(Type.Integer({ description: 'the owner or admin behind the actor, when the actor was "become"' })),
  target_user_id: Nullable(Type.Integer({ description: 'the client acted on' })),
  ip: Nullable(Type.String()),
  details: Nullable(Type.Object({}, { additionalProperties: true })),
  created_at: Type.String({ description: 'YYYY-MM-DD HH:MM:SS UTC' }),
});

const AuditQuery = Type.Object({
  page: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000, default: 1, description: 'page number, from 1' })),
  per_page: Type.Optional(PerPage),
});

export const auditRoutes: FastifyPluginAsyncTypebox<{ audit: AuditService }> = async (app, { audit }) => {
  app.get(
    '/audit',
    {
      schema: {
        tags: ['Audit'],
        summary: "The account's audit log, newest first (account owners only)",
        description: 'Who created, changed, deleted or became which client, when and from which IP.',
        querystring: AuditQuery,
        response: { 200: PageEnvelope(AuditEntry), ...errorResponses(400, 401, 403) },
      },
    },
    async (request) => {
      const page = request.query.page ?? 1;
      const { records, total, perPage } = await audit.page(principalOf(request), page, request.query.per_page ?? 20);
      return pageEnvelope(records, total, page, perPage);
    },
  );
};
