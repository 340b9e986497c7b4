import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { principalOf } from '../../accounts/api-key-hook.js';
import { errorResponses } from '../../http/schemas.js';
import { type PublicationService, presentPublication } from './service.js';

const Publication = Type.Object({
  id: Type.Integer(),
  app_id: Type.String(),
  name: Type.String(),
  access_level: Type.String({ description: "the caller's access: owner, admin, editor, author or viewer" }),
  created_at: Type.String(),
  updated_at: Type.String(),
});

export const publicationRoutes: FastifyPluginAsyncTypebox<{ publications: PublicationService }> = async (app, { publications }) => {
  app.get(
    '/publications',
    {
      schema: {
        tags: ['Publications'],
        summary: 'The publications the caller may see',
        response: { 200: Type.Array(Publication), ...errorResponses(401) },
      },
    },
    async (request) => (await publications.listVisible(principalOf(request))).map(presentPublication),
  );
};
